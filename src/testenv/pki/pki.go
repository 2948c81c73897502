// Package pki makes certificate authorities and certificates for tests, written to a directory with tight
// modes (keys 0600).
//
//	ca, err := pki.NewCA(dir, "etcd-ca")                          // ECDSA P-256 keys
//	ca, err := pki.NewCAWith(dir, "etcd-ca", pki.RSA(3072))       // RSA keys, as the bosh CLI generates them
//	server, err := ca.Issue(pki.Server("member-0", []string{"etcd.test.internal"}, ips))
//	client, err := ca.Issue(pki.Client("flanneld"))
//	expired, err := ca.Issue(pki.Client("old").ValidUntil(time.Now().Add(-time.Hour)))
package pki

import (
	"cmp"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
)

// CA signs certificates. CertFile is its certificate in PEM.
type CA struct {
	Name     string
	CertFile string
	cert     *x509.Certificate
	key      crypto.Signer
	keys     Keys
	dir      string
}

// Keys makes the private keys of a CA and of the certificates it issues.
type Keys func() (crypto.Signer, error)

// ECDSAP256 keys are cheap to make and to use.
func ECDSAP256() (crypto.Signer, error) {
	return ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
}

// RSA keys of the given size are what BOSH generates for a manifest's certificates: the bosh CLI's vars store
// (config-server) 3072 bits, CredHub 2048. Each TLS handshake signs with them, so they cost far more CPU.
func RSA(bits int) Keys {
	return func() (crypto.Signer, error) { return rsa.GenerateKey(rand.Reader, bits) }
}

// Pair is an issued certificate and its key, both as files.
type Pair struct {
	Cert     *x509.Certificate
	CertFile string
	KeyFile  string
}

// Request describes a certificate to issue.
type Request struct {
	name      string // names the files and, unless set apart, the subject's common name
	cn        string
	dnsNames  []string
	ips       []net.IP
	usages    []x509.ExtKeyUsage
	notBefore time.Time
	notAfter  time.Time
}

// Server asks for a server certificate for these names and addresses.
func Server(name string, dnsNames []string, ips []net.IP) Request {
	return Request{name: name, dnsNames: dnsNames, ips: ips,
		// etcd also presents its server certificate as a client (its gateway), so it needs both usages.
		usages:    []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		notBefore: time.Now().Add(-time.Hour), notAfter: time.Now().Add(24 * time.Hour)}
}

// Client asks for a client certificate.
func Client(name string) Request {
	return Request{name: name, usages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		notBefore: time.Now().Add(-time.Hour), notAfter: time.Now().Add(24 * time.Hour)}
}

// CommonName sets the subject's common name apart from the name the files take after.
func (r Request) CommonName(cn string) Request {
	r.cn = cn
	return r
}

// ValidUntil sets the end of validity; a time in the past makes an expired certificate.
func (r Request) ValidUntil(notAfter time.Time) Request {
	r.notAfter = notAfter
	if !r.notBefore.Before(notAfter) {
		r.notBefore = notAfter.Add(-24 * time.Hour)
	}
	return r
}

// NewCA makes a self-signed CA with ECDSA P-256 keys and writes its certificate and key under dir.
func NewCA(dir, name string) (*CA, error) {
	return NewCAWith(dir, name, ECDSAP256)
}

// NewCAWith makes a self-signed CA whose key and issued keys come from keys.
func NewCAWith(dir, name string, keys Keys) (*CA, error) {
	key, err := keys()
	if err != nil {
		return nil, bosherr.WrapError(err, "Generating a CA key")
	}
	template := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, key.Public(), key)
	if err != nil {
		return nil, bosherr.WrapErrorf(err, "Creating CA certificate '%s'", name)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, bosherr.WrapError(err, "Parsing the new CA certificate")
	}
	ca := &CA{Name: name, cert: cert, key: key, keys: keys, dir: dir}
	pair, err := write(dir, name, cert, key)
	ca.CertFile = pair.CertFile
	return ca, err
}

// Issue signs the request and writes the certificate and key under the CA's directory.
func (ca *CA) Issue(r Request) (Pair, error) {
	key, err := ca.keys()
	if err != nil {
		return Pair{}, bosherr.WrapError(err, "Generating a key")
	}
	template := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: cmp.Or(r.cn, r.name)},
		DNSNames:     r.dnsNames,
		IPAddresses:  r.ips,
		NotBefore:    r.notBefore,
		NotAfter:     r.notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  r.usages,
	}
	der, err := x509.CreateCertificate(rand.Reader, template, ca.cert, key.Public(), ca.key)
	if err != nil {
		return Pair{}, bosherr.WrapErrorf(err, "Signing certificate '%s' with CA '%s'", r.name, ca.Name)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return Pair{}, bosherr.WrapError(err, "Parsing the new certificate")
	}
	// The serial keeps files apart when two certificates share a name: etcd re-reads its files.
	return write(ca.dir, fmt.Sprintf("%s-%s-%x", ca.Name, r.name, cert.SerialNumber), cert, key)
}

func write(dir, name string, cert *x509.Certificate, key crypto.Signer) (Pair, error) {
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return Pair{}, bosherr.WrapError(err, "Encoding a key")
	}
	pair := Pair{Cert: cert, CertFile: filepath.Join(dir, name+".crt"), KeyFile: filepath.Join(dir, name+".key")}
	if err := writePEM(pair.CertFile, "CERTIFICATE", cert.Raw, 0o644); err != nil {
		return Pair{}, err
	}
	return pair, writePEM(pair.KeyFile, "PRIVATE KEY", keyDER, 0o600)
}

func writePEM(path, blockType string, der []byte, mode os.FileMode) error {
	data := pem.EncodeToMemory(&pem.Block{Type: blockType, Bytes: der})
	if err := os.WriteFile(path, data, mode); err != nil {
		return bosherr.WrapErrorf(err, "Writing '%s'", path)
	}
	if err := os.Chmod(path, mode); err != nil {
		return bosherr.WrapErrorf(err, "Setting the mode of '%s'", path)
	}
	return nil
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62)) // crypto/rand does not fail on Linux
	return n
}
