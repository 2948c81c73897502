package pki_test

import (
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"net"
	"os"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/flannel-dns/flannel-dns/src/testenv/pki"
)

var _ = Describe("PKI", func() {
	var (
		ca    *pki.CA
		roots *x509.CertPool
	)

	BeforeEach(func() {
		var err error
		ca, err = pki.NewCA(GinkgoT().TempDir(), "test-ca")
		Expect(err).NotTo(HaveOccurred())
		caPEM, err := os.ReadFile(ca.CertFile)
		Expect(err).NotTo(HaveOccurred())
		roots = x509.NewCertPool()
		Expect(roots.AppendCertsFromPEM(caPEM)).To(BeTrue())
	})

	mode := func(path string) os.FileMode {
		info, err := os.Stat(path)
		Expect(err).NotTo(HaveOccurred())
		return info.Mode().Perm()
	}

	verify := func(pair pki.Pair, name string, usage x509.ExtKeyUsage) error {
		_, err := pair.Cert.Verify(x509.VerifyOptions{Roots: roots, DNSName: name, KeyUsages: []x509.ExtKeyUsage{usage}})
		return err
	}

	It("writes keys readable by the owner only", func() {
		server, err := ca.Issue(pki.Server("member-0", []string{"etcd.test.internal"}, nil))
		Expect(err).NotTo(HaveOccurred())

		Expect(mode(server.KeyFile)).To(Equal(os.FileMode(0o600)))
		Expect(mode(server.CertFile)).To(Equal(os.FileMode(0o644)))
		_, err = tls.LoadX509KeyPair(server.CertFile, server.KeyFile)
		Expect(err).NotTo(HaveOccurred())
	})

	It("issues server certificates that cover exactly the names and addresses asked for", func() {
		server, err := ca.Issue(pki.Server("member-0",
			[]string{"etcd.test.internal", "member-0.etcd.test.internal"}, []net.IP{net.ParseIP("127.0.0.1")}))
		Expect(err).NotTo(HaveOccurred())

		Expect(verify(server, "member-0.etcd.test.internal", x509.ExtKeyUsageServerAuth)).To(Succeed())
		Expect(verify(server, "etcd.test.internal", x509.ExtKeyUsageServerAuth)).To(Succeed())
		Expect(verify(server, "127.0.0.1", x509.ExtKeyUsageServerAuth)).To(Succeed())
		Expect(verify(server, "member-1.etcd.test.internal", x509.ExtKeyUsageServerAuth)).To(HaveOccurred())
	})

	It("issues client certificates, expired ones on request", func() {
		client, err := ca.Issue(pki.Client("flanneld"))
		Expect(err).NotTo(HaveOccurred())
		expired, err := ca.Issue(pki.Client("old").ValidUntil(time.Now().Add(-time.Minute)))
		Expect(err).NotTo(HaveOccurred())

		Expect(verify(client, "", x509.ExtKeyUsageClientAuth)).To(Succeed())
		Expect(verify(client, "", x509.ExtKeyUsageServerAuth)).To(HaveOccurred())
		var invalid x509.CertificateInvalidError
		Expect(verify(expired, "", x509.ExtKeyUsageClientAuth)).To(BeAssignableToTypeOf(invalid))
		Expect(expired.Cert.NotAfter).To(BeTemporally("<", time.Now()))
	})

	It("makes RSA keys of the asked size for a CA that uses them, and certificates that verify", func() {
		rsaCA, err := pki.NewCAWith(GinkgoT().TempDir(), "rsa-ca", pki.RSA(2048))
		Expect(err).NotTo(HaveOccurred())
		server, err := rsaCA.Issue(pki.Server("member-0", []string{"etcd.test.internal"}, nil))
		Expect(err).NotTo(HaveOccurred())

		pair, err := tls.LoadX509KeyPair(server.CertFile, server.KeyFile)
		Expect(err).NotTo(HaveOccurred())
		key, ok := pair.PrivateKey.(*rsa.PrivateKey)
		Expect(ok).To(BeTrue(), "a %T", pair.PrivateKey)
		Expect(key.N.BitLen()).To(Equal(2048))
		Expect(server.Cert.SignatureAlgorithm).To(Equal(x509.SHA256WithRSA))
		caPEM, err := os.ReadFile(rsaCA.CertFile)
		Expect(err).NotTo(HaveOccurred())
		rsaRoots := x509.NewCertPool()
		Expect(rsaRoots.AppendCertsFromPEM(caPEM)).To(BeTrue())
		_, err = server.Cert.Verify(x509.VerifyOptions{Roots: rsaRoots, DNSName: "etcd.test.internal"})
		Expect(err).NotTo(HaveOccurred())
	})

	It("keeps CAs apart", func() {
		other, err := pki.NewCA(GinkgoT().TempDir(), "other-ca")
		Expect(err).NotTo(HaveOccurred())
		stranger, err := other.Issue(pki.Client("stranger"))
		Expect(err).NotTo(HaveOccurred())

		var unknown x509.UnknownAuthorityError
		Expect(verify(stranger, "", x509.ExtKeyUsageClientAuth)).To(BeAssignableToTypeOf(unknown))
	})
})
