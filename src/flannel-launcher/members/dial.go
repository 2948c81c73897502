package members

import (
	"context"
	"net"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
)

// Resolver finds a host's addresses; resolve.Resolver is one.
type Resolver interface {
	Lookup(ctx context.Context, name string) ([]net.IP, error)
}

// dialer opens TCP connections for gRPC, resolving host names with the injected resolver instead of the
// system one. For the alias it prefers the addresses that completed a TLS handshake in CheckServerCerts:
// a member that accepts connections but never answers would otherwise hold the client until gRPC gives up.
type dialer struct {
	resolver   Resolver
	alias      string
	handshakes *handshakes
}

func (d *dialer) addresses(ctx context.Context, host string) ([]net.IP, error) {
	if ip := net.ParseIP(host); ip != nil {
		return []net.IP{ip}, nil
	}
	preferred := d.handshakes.answeredIPs()
	if host == d.alias && len(preferred) > 0 {
		return preferred, nil
	}
	return d.resolver.Lookup(ctx, host)
}

// Dial connects to the first address of host that accepts, in the order the resolver gave them.
func (d *dialer) Dial(ctx context.Context, hostPort string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(hostPort)
	if err != nil {
		return nil, bosherr.WrapErrorf(err, "Splitting '%s'", hostPort)
	}
	ips, err := d.addresses(ctx, host)
	if err != nil {
		return nil, err
	}
	var netDialer net.Dialer
	var lastErr error
	for _, ip := range ips {
		conn, err := netDialer.DialContext(ctx, "tcp", net.JoinHostPort(ip.String(), port))
		if err == nil {
			return conn, nil
		}
		lastErr = err
	}
	return nil, bosherr.WrapErrorf(lastErr, "Connecting to '%s'", hostPort)
}
