package v2import_test

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	boshlog "github.com/cloudfoundry/bosh-utils/logger"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/config"
	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/members"
	"github.com/flannel-dns/flannel-dns/src/testenv/etcdv2"
	"github.com/flannel-dns/flannel-dns/src/testenv/pki"
)

func TestV2import(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "V2import Suite")
}

// One etcd 3.4 (Debian's, v2 API on, mutual TLS) for the suite; each spec works under a prefix of its own.
var (
	member   *etcdv2.Member
	suiteCA  *pki.CA
	etcdTLS  config.Etcd
	prefixes atomic.Int32
)

var _ = BeforeSuite(func() {
	var err error
	suiteCA, err = pki.NewCA(GinkgoT().TempDir(), "etcd-ca")
	Expect(err).NotTo(HaveOccurred())
	client, err := suiteCA.Issue(pki.Client("flanneld"))
	Expect(err).NotTo(HaveOccurred())
	etcdTLS = config.Etcd{CAFile: suiteCA.CertFile, CertFile: client.CertFile, KeyFile: client.KeyFile}
	member, err = etcdv2.Start(suiteCA, nil)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(member.Close)
})

func uniquePrefix() string {
	return fmt.Sprintf("/test-%d-%d/network", GinkgoParallelProcess(), prefixes.Add(1))
}

// httpClient is the launcher's own client for the v2 API (members.Pass.HTTPClient), as the v2 reader gets it.
func httpClient() *http.Client {
	cluster, err := members.New(config.Config{Etcd: etcdTLS}, nil, boshlog.NewLogger(boshlog.LevelNone))
	Expect(err).NotTo(HaveOccurred())
	client := cluster.NewPass().HTTPClient()
	DeferCleanup(client.CloseIdleConnections)
	return client
}

// serverTLS is a server's TLS setup with a certificate from the suite's CA for addr's IP, which the launcher's
// client verifies.
func serverTLS(addr net.Addr) *tls.Config {
	pair, err := suiteCA.Issue(pki.Server("v2-test", nil, []net.IP{addr.(*net.TCPAddr).IP}))
	Expect(err).NotTo(HaveOccurred())
	cert, err := tls.LoadX509KeyPair(pair.CertFile, pair.KeyFile)
	Expect(err).NotTo(HaveOccurred())
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
}

// v3Client talks to the same member's v3 API with the launcher's TLS setup.
func v3Client() *clientv3.Client {
	return v3ClientOf(member)
}

// v3ClientOf talks to m's v3 API with the launcher's TLS setup.
func v3ClientOf(m *etcdv2.Member) *clientv3.Client {
	tlsConfig, err := members.TLSConfig(etcdTLS, time.Now())
	Expect(err).NotTo(HaveOccurred())
	client, err := clientv3.New(clientv3.Config{Endpoints: []string{m.URL}, TLS: tlsConfig, DialTimeout: 10 * time.Second})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(client.Close)
	return client
}
