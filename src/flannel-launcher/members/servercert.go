package members

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
)

// ServerCert is what a TLS handshake with one of the alias' addresses showed.
type ServerCert struct {
	Address     string // ip:port
	CoversAlias bool
	DNSNames    []string
	NotAfter    time.Time
	Err         error // nil when the handshake verified; a *CertError when the TLS setup is wrong
}

// CertError is a TLS setup problem (certificates, CA): retrying does not help.
type CertError struct {
	Address string
	Problem string
}

func (e *CertError) Error() string {
	return fmt.Sprintf("TLS handshake with etcd at %s: %s", e.Address, e.Problem)
}

// UnreachableError means no alias address completed a handshake: nothing answered in time.
type UnreachableError struct {
	Alias  string
	Causes []string
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("no etcd member answered at the addresses of '%s': %s", e.Alias, strings.Join(e.Causes, "; "))
}

// CheckServerCerts shakes hands with every address of the alias in parallel, each within the probe timeout,
// verifying the server certificate against the alias name, and keeps the connections that verified for the
// pass's requests (Client, Members). Once a majority verified, the others get a short grace and are then left
// out, unless the cluster waits for all (WaitForAll). When none verified, it fails with the first *CertError (a
// TLS setup problem), or else an *UnreachableError. When some did, an address whose certificate does not verify
// is only left out, with a warning: one stranger added to the alias' answer (a spoofed or stale record) must not
// keep flanneld from starting, and nothing is sent to it either way, since every connection verifies the
// certificate. A pass checks once.
func (p *Pass) CheckServerCerts(ctx context.Context, ips []net.IP) ([]ServerCert, error) {
	checks := make([]addressCheck, len(ips))
	settle(ctx, len(ips), p.cluster.leaveOutLate, func(ctx context.Context, i int) bool {
		checks[i] = p.cluster.checkServerCert(ctx, ips[i])
		return checks[i].cert.Err == nil
	})
	p.keep(checks)
	results := make([]ServerCert, len(checks))
	var causes []string
	var certErrs []*CertError
	for i, check := range checks {
		results[i] = check.cert
		var certErr *CertError
		if errors.As(check.cert.Err, &certErr) {
			certErrs = append(certErrs, certErr)
		}
		if check.cert.Err != nil {
			causes = append(causes, fmt.Sprintf("%s: %s", check.cert.Address, check.cert.Err))
		}
	}
	switch {
	case len(causes) < len(results):
		for _, certErr := range certErrs {
			p.cluster.logger.Warn(logTag, "Leaving out an address of '%s' whose certificate does not verify: %s", p.cluster.alias, certErr)
		}
		return results, nil
	case len(certErrs) > 0:
		return results, certErrs[0]
	}
	return results, &UnreachableError{Alias: p.cluster.alias, Causes: causes}
}

// addressCheck is how the handshake with one address of the alias went.
type addressCheck struct {
	cert ServerCert
	conn *tls.Conn // open when the certificate verified and the server speaks HTTP/2, as gRPC needs
	// connected: the TCP connection was made, so a failure came from TLS or the server's silence after it
	connected bool
}

func (c *Cluster) checkServerCert(ctx context.Context, ip net.IP) addressCheck {
	address := net.JoinHostPort(ip.String(), strconv.Itoa(c.port))
	check := addressCheck{cert: ServerCert{Address: address}}
	probeCtx, cancel := context.WithTimeout(ctx, c.probeTimeout)
	defer cancel()
	conn, err := c.handshake(probeCtx, address, tls.VersionTLS12, &check.connected)
	if isProtocolVersionAlert(err) {
		conn, err = c.handshake(probeCtx, address, 0, &check.connected)
	}
	lateErr, cutLate := late(ctx)
	switch {
	case err != nil && cutLate:
		check.cert.Err = bosherr.Errorf("no TLS handshake within %s, by when %d of the alias' %d addresses had answered",
			lateErr.waited.Round(time.Millisecond), lateErr.succeeded, lateErr.of)
		return check
	case err != nil && ctx.Err() != nil:
		// The caller's deadline or stop, not the probe timeout, ended the handshake.
		check.cert.Err = bosherr.WrapError(ctx.Err(), "TLS handshake cut short")
		return check
	case err != nil:
		check.cert.Err = c.describeHandshakeError(address, err, &check.cert)
		return check
	}
	state := conn.ConnectionState()
	leaf := state.PeerCertificates[0]
	check.cert.CoversAlias, check.cert.DNSNames, check.cert.NotAfter = true, leaf.DNSNames, leaf.NotAfter
	if state.NegotiatedProtocol == http2 {
		check.conn = conn
	} else {
		conn.Close() // gRPC's own handshake will say what it misses
	}
	return check
}

// http2 is the ALPN name of HTTP/2, which gRPC speaks.
const http2 = "h2"

// handshake is capped at TLS 1.2 first because a 1.2 handshake completes only after the server has
// accepted our client certificate, so a rejection shows up here with the alert that says why; in TLS 1.3
// it would surface later as an opaque gRPC connection error. connected is set once the TCP connection is made.
func (c *Cluster) handshake(ctx context.Context, address string, maxVersion uint16, connected *bool) (*tls.Conn, error) {
	conf := c.tls.Clone()
	conf.ServerName = c.alias
	conf.MaxVersion = maxVersion
	conf.NextProtos = []string{http2}
	var dialer net.Dialer
	raw, err := dialer.DialContext(ctx, "tcp", address)
	if err != nil {
		return nil, err
	}
	*connected = true
	conn := tls.Client(raw, conf)
	if err := conn.HandshakeContext(ctx); err != nil {
		raw.Close()
		return nil, err
	}
	return conn, nil
}

func isProtocolVersionAlert(err error) bool {
	var opErr *net.OpError
	return errors.As(err, &opErr) && opErr.Op == "remote error" &&
		opErr.Err.Error() == tls.AlertError(70).Error() // alert 70: protocol_version
}

func (c *Cluster) describeHandshakeError(address string, err error, result *ServerCert) error {
	var verifyErr *tls.CertificateVerificationError
	if errors.As(err, &verifyErr) && len(verifyErr.UnverifiedCertificates) > 0 {
		leaf := verifyErr.UnverifiedCertificates[0]
		result.DNSNames, result.NotAfter = leaf.DNSNames, leaf.NotAfter
		result.CoversAlias = leaf.VerifyHostname(c.alias) == nil
		return &CertError{Address: address, Problem: c.describeVerifyError(verifyErr.Err, leaf)}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return bosherr.Errorf("no TLS handshake within the probe timeout (%s)", c.probeTimeout)
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) && opErr.Op == "remote error" {
		return &CertError{Address: address, Problem: fmt.Sprintf(
			"the server refused the handshake (%s); is etcd.cert_file '%s' signed by a CA that etcd trusts?", opErr.Err, c.certFile)}
	}
	return err
}

func (c *Cluster) describeVerifyError(err error, leaf *x509.Certificate) string {
	var hostErr x509.HostnameError
	var authorityErr x509.UnknownAuthorityError
	var invalidErr x509.CertificateInvalidError
	switch {
	case errors.As(err, &hostErr):
		return fmt.Sprintf("the server certificate does not cover the alias '%s' (its names: %s)", c.alias, certNames(leaf))
	case errors.As(err, &authorityErr):
		return fmt.Sprintf("the server certificate (issued by '%s') is not signed by the CA in etcd.ca_file '%s'",
			leaf.Issuer, c.caFile)
	case errors.As(err, &invalidErr) && invalidErr.Reason == x509.Expired:
		return fmt.Sprintf("the server certificate is outside its validity (%s to %s)",
			leaf.NotBefore.UTC().Format(time.RFC3339), leaf.NotAfter.UTC().Format(time.RFC3339))
	default:
		return fmt.Sprintf("the server certificate does not verify: %s", err)
	}
}

func certNames(cert *x509.Certificate) string {
	names := append([]string(nil), cert.DNSNames...)
	for _, ip := range cert.IPAddresses {
		names = append(names, ip.String())
	}
	if len(names) == 0 {
		return "none; the common name '" + cert.Subject.CommonName + "' is not used for host names"
	}
	return strings.Join(names, ", ")
}
