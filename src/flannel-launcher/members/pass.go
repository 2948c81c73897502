package members

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"sync"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
)

// Pass is one attempt at etcd. CheckServerCerts opens one TLS connection to each address of the alias and keeps
// those that verified: the first for the etcd client (Client), every other one for a gRPC connection that starts
// at once, for the probe of the member at that address (Members). Close ends every connection of the pass.
type Pass struct {
	cluster *Cluster

	mu        sync.Mutex
	verified  []string             // the addresses (ip:port) whose certificate verified, in the alias' order
	failed    map[string]failure   // by address: why its handshake failed
	warm      map[string]*warmConn // by address: gRPC on its checked connection, for a probe
	forClient *checkedConn         // the first checked connection, until the client takes it
	clientAt  *checkedConn         // the checked connection the client took, while it has not dialled again

	client    *clientv3.Client
	clientErr error
	newClient sync.Once
}

// checkedConn is a connection whose handshake CheckServerCerts verified against the alias.
type checkedConn struct {
	*tls.Conn
	address string // ip:port
}

// warmConn is a gRPC connection on a checked connection; its certificate is checked against a member's name
// before a probe uses it.
type warmConn struct {
	grpc  *grpc.ClientConn
	conn  *checkedConn
	state tls.ConnectionState
}

// failure is why an address failed the check; connected: after the TCP connection was made.
type failure struct {
	err       error
	connected bool
}

// NewPass starts an attempt; the caller closes it.
func (c *Cluster) NewPass() *Pass {
	return &Pass{cluster: c, failed: map[string]failure{}, warm: map[string]*warmConn{}}
}

// keep notes how the check of each address went, in the alias' order.
func (p *Pass) keep(checks []addressCheck) {
	p.mu.Lock()
	defer p.mu.Unlock()
	seen := map[string]bool{}
	for _, check := range checks {
		address := check.cert.Address
		switch {
		case seen[address]: // the address came twice in the alias' answer; the first handshake counts
			if check.conn != nil {
				check.conn.Close()
			}
			continue
		case check.cert.Err != nil:
			p.failed[address] = failure{err: check.cert.Err, connected: check.connected}
		case check.conn == nil: // not HTTP/2: gRPC connects anew, and says what it misses
			p.verified = append(p.verified, address)
		case p.forClient == nil:
			p.verified = append(p.verified, address)
			p.forClient = &checkedConn{Conn: check.conn, address: address}
		default:
			p.verified = append(p.verified, address)
			p.warmUp(&checkedConn{Conn: check.conn, address: address})
		}
		seen[address] = true
	}
}

// warmUp starts gRPC on conn now, so that its HTTP/2 setup overlaps the member list; p.mu is held. Should gRPC
// not take it, the member's probe connects anew.
func (p *Pass) warmUp(conn *checkedConn) {
	cc, err := p.cluster.handOver(p.cluster.alias, conn)
	if err != nil {
		p.cluster.logger.Debug(logTag, "%s", err)
		return
	}
	cc.Connect()
	p.warm[conn.address] = &warmConn{grpc: cc, conn: conn, state: conn.ConnectionState()}
}

// Client talks to etcd through the alias URL, so TLS verifies the alias name, on the first connection that
// CheckServerCerts verified. Close closes it.
func (p *Pass) Client() (*clientv3.Client, error) {
	p.newClient.Do(func() {
		p.client, p.clientErr = clientv3.New(clientv3.Config{
			Endpoints: []string{p.cluster.aliasURL},
			TLS:       p.cluster.tls,
			DialOptions: []grpc.DialOption{
				grpc.WithContextDialer(p.dialClient),
				grpc.WithTransportCredentials(p.cluster.creds),
			},
			Logger: zap.NewNop(),
		})
		if p.clientErr != nil {
			p.clientErr = bosherr.WrapErrorf(p.clientErr, "Creating an etcd client for '%s'", p.cluster.aliasURL)
		}
	})
	return p.client, p.clientErr
}

// dialClient gives the client the first connection that CheckServerCerts verified; once that is gone (the
// client dials again after losing it), a new TCP connection to an address that verified, on which gRPC shakes
// hands itself.
func (p *Pass) dialClient(ctx context.Context, hostPort string) (net.Conn, error) {
	p.mu.Lock()
	p.clientAt, p.forClient = p.forClient, nil
	conn := p.clientAt
	p.mu.Unlock()
	if conn != nil {
		return conn, nil
	}
	return p.dialTCP(ctx, hostPort)
}

// HTTPClient talks HTTPS to etcd (its v2 API) with the client's TLS setup, on connections of its own: the host
// name dialed is verified, and for the alias the addresses that passed CheckServerCerts come first. It follows
// no redirect: the answer is the 30x itself, since a member's redirect could send the request anywhere, in clear
// text too. The caller closes its idle connections.
func (p *Pass) HTTPClient() *http.Client {
	tlsConfig := p.cluster.tls.Clone()
	tlsConfig.NextProtos = nil // HTTP/1.1, which etcd's v2 API serves
	return &http.Client{
		Transport: &http.Transport{TLSClientConfig: tlsConfig,
			DialContext: func(ctx context.Context, _, address string) (net.Conn, error) { return p.dialTCP(ctx, address) }},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// dialTCP connects to the first address of host that accepts: for the alias, those whose certificate verified,
// in the alias' order, or else the resolver's answer, as for any other host.
func (p *Pass) dialTCP(ctx context.Context, hostPort string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(hostPort)
	if err != nil {
		return nil, bosherr.WrapErrorf(err, "Splitting '%s'", hostPort)
	}
	p.mu.Lock()
	addresses := p.verified
	p.mu.Unlock()
	if host != p.cluster.alias || len(addresses) == 0 {
		ips, err := p.cluster.addresses(ctx, host)
		if err != nil {
			return nil, err
		}
		addresses = nil
		for _, ip := range ips {
			addresses = append(addresses, net.JoinHostPort(ip.String(), port))
		}
	}
	var dialer net.Dialer
	var lastErr error
	for _, address := range addresses {
		conn, err := dialer.DialContext(ctx, "tcp", address)
		if err == nil {
			return conn, nil
		}
		lastErr = err
	}
	return nil, bosherr.WrapErrorf(lastErr, "Connecting to '%s'", hostPort)
}

// Close closes the client and every other connection of the pass.
func (p *Pass) Close() {
	if p.client != nil {
		_ = p.client.Close() // its connection goes with it; an error would change nothing
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.forClient != nil {
		p.forClient.Close()
		p.forClient = nil
	}
	for address, warm := range p.warm {
		closeGRPC(warm.grpc, warm.conn)
		delete(p.warm, address)
	}
}
