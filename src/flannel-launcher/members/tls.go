package members

import (
	"crypto/tls"
	"crypto/x509"
	"os"
	"time"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/config"
)

// TLSConfig is the mutual TLS setup for etcd: the configured CA only, the client certificate, TLS 1.2 or
// newer. ServerName stays empty so that each connection verifies the host name it dials.
func TLSConfig(e config.Etcd, now time.Time) (*tls.Config, error) {
	caPEM, err := os.ReadFile(e.CAFile)
	if err != nil {
		return nil, bosherr.WrapErrorf(err, "Reading etcd.ca_file '%s'", e.CAFile)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, bosherr.Errorf("etcd.ca_file '%s' holds no PEM certificate", e.CAFile)
	}
	pair, err := tls.LoadX509KeyPair(e.CertFile, e.KeyFile)
	if err != nil {
		return nil, bosherr.WrapErrorf(err, "Loading etcd.cert_file '%s' and etcd.key_file '%s'", e.CertFile, e.KeyFile)
	}
	if err := checkValidity(pair.Leaf, e.CertFile, now); err != nil {
		return nil, err
	}
	return &tls.Config{
		RootCAs:      pool,
		Certificates: []tls.Certificate{pair},
		MinVersion:   tls.VersionTLS12,
	}, nil
}

// checkValidity catches an expired client certificate here, where the message can say so, rather than as
// the server's terse "bad certificate" alert.
func checkValidity(cert *x509.Certificate, path string, now time.Time) error {
	if now.After(cert.NotAfter) {
		return bosherr.Errorf("etcd.cert_file '%s': the client certificate expired at %s",
			path, cert.NotAfter.UTC().Format(time.RFC3339))
	}
	if now.Before(cert.NotBefore) {
		return bosherr.Errorf("etcd.cert_file '%s': the client certificate is not valid before %s",
			path, cert.NotBefore.UTC().Format(time.RFC3339))
	}
	return nil
}
