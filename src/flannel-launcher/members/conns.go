package members

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"sync/atomic"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
)

// conn is a connection to the member at hostPort, on the first of its addresses ips that takes one, in the
// resolver's order, as a dialer would choose: the client's own where the client went, the one CheckServerCerts
// opened otherwise, or a new one where the check did not go. Its certificate must cover the member's host name.
// An address whose handshake failed in the check fails the same way here; one that refused the connection is
// passed over. release closes what conn opened.
func (p *Pass) conn(ctx context.Context, client *clientv3.Client, hostPort string, ips []net.IP) (pb.MaintenanceClient, func(), error) {
	host, port, err := net.SplitHostPort(hostPort)
	if err != nil {
		return nil, nil, bosherr.WrapErrorf(err, "Splitting '%s'", hostPort)
	}
	var lastErr error
	for _, ip := range ips {
		conn, release, next, err := p.connAt(ctx, client, host, net.JoinHostPort(ip.String(), port))
		if !next {
			return conn, release, err
		}
		lastErr = err
	}
	return nil, nil, lastErr
}

// connAt is a connection to address for host; next: the address refused it, the next one may take it.
func (p *Pass) connAt(ctx context.Context, client *clientv3.Client, host, address string) (pb.MaintenanceClient, func(), bool, error) {
	p.mu.Lock()
	clientAt, warm := p.clientAt, p.warm[address]
	failed, known := p.failed[address]
	p.mu.Unlock()
	switch {
	case clientAt != nil && clientAt.address == address:
		return checkedFor(host, address, clientAt.ConnectionState(), client.ActiveConnection())
	case warm != nil:
		return checkedFor(host, address, warm.state, warm.grpc)
	case known:
		return nil, nil, !failed.connected, bosherr.WrapError(failed.err, "No TLS handshake with its address")
	}
	var dialer net.Dialer
	raw, err := dialer.DialContext(ctx, "tcp", address)
	if err != nil {
		return nil, nil, true, bosherr.WrapError(err, "Connecting to its address")
	}
	cc, err := p.cluster.handOver(host, raw)
	if err != nil {
		return nil, nil, false, err
	}
	return pb.NewMaintenanceClient(cc), func() { closeGRPC(cc, raw) }, false, nil
}

// checkedFor is cc, a gRPC connection on a connection to address that CheckServerCerts verified, when its
// certificate covers host too. The pass closes cc.
func checkedFor(host, address string, state tls.ConnectionState, cc *grpc.ClientConn) (pb.MaintenanceClient, func(), bool, error) {
	if err := covers(state, host); err != nil {
		return nil, nil, false, bosherr.WrapErrorf(err, "TLS handshake with etcd at %s", address)
	}
	return pb.NewMaintenanceClient(cc), func() {}, false, nil
}

// handOver makes a gRPC connection for host on conn: one that CheckServerCerts verified is taken as it is, on
// another gRPC shakes hands with host as the server name. On an error conn is closed.
func (c *Cluster) handOver(host string, conn net.Conn) (*grpc.ClientConn, error) {
	var given atomic.Bool
	cc, err := grpc.NewClient("passthrough:///"+net.JoinHostPort(host, portOf(conn.RemoteAddr().String())),
		grpc.WithTransportCredentials(c.creds),
		grpc.WithContextDialer(func(context.Context, string) (net.Conn, error) {
			if given.Swap(true) {
				return nil, errConnGone
			}
			return conn, nil
		}))
	if err != nil {
		conn.Close()
		return nil, bosherr.WrapErrorf(err, "Setting up gRPC for '%s' on a connection to %s", host, conn.RemoteAddr())
	}
	return cc, nil
}

// closeGRPC closes cc and conn, which cc may not have taken yet.
func closeGRPC(cc *grpc.ClientConn, conn net.Conn) {
	_ = cc.Close() // nothing is waiting on it any more
	conn.Close()
}

var errConnGone = errors.New("the probe's connection is closed")

func portOf(address string) string {
	_, port, _ := net.SplitHostPort(address) // an address this package joined
	return port
}

// checkedCreds are gRPC's TLS credentials, except for a connection that CheckServerCerts verified: that one is
// taken as it is, once its certificate covers the host that gRPC dials.
type checkedCreds struct {
	credentials.TransportCredentials
}

func (c checkedCreds) ClientHandshake(ctx context.Context, authority string, raw net.Conn) (net.Conn, credentials.AuthInfo, error) {
	checked, ok := raw.(*checkedConn)
	if !ok {
		return c.TransportCredentials.ClientHandshake(ctx, authority, raw)
	}
	host, _, err := net.SplitHostPort(authority)
	if err != nil {
		host = authority // no port
	}
	state := checked.ConnectionState()
	if err := covers(state, host); err != nil {
		checked.Close()
		return nil, nil, err
	}
	return checked.Conn, credentials.TLSInfo{State: state, CommonAuthInfo: credentials.CommonAuthInfo{
		SecurityLevel: credentials.PrivacyAndIntegrity}}, nil
}

func (c checkedCreds) Clone() credentials.TransportCredentials {
	return checkedCreds{c.TransportCredentials.Clone()}
}

// covers tells whether the certificate of a verified handshake names host, as a handshake with host as the
// server name checks it: the chain and the validity were verified in that handshake, with the same roots.
func covers(state tls.ConnectionState, host string) error {
	if len(state.VerifiedChains) == 0 {
		return bosherr.Error("the server certificate was not verified")
	}
	leaf := state.PeerCertificates[0]
	if leaf.VerifyHostname(host) != nil {
		return bosherr.Errorf("the server certificate does not cover '%s' (its names: %s)", host, certNames(leaf))
	}
	return nil
}
