// Package etcdcluster runs a real etcd cluster inside the test process: each member on its own loopback
// address, all on the same client port (so one alias name can point at all of them), client TLS with
// mandatory client certificates, and client URLs advertised under per-member host names.
//
//	cluster, err := etcdcluster.Start(ca, etcdcluster.Options{Size: 3, Domain: "etcd.test.internal"})
//	defer cluster.Close()
//	cluster.Publish(dnsServer)   // alias -> every member's address, member-N.<domain> -> its address
//	cluster.Stop(1); cluster.Restart(1); cluster.BlackHole(2)
package etcdcluster

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
	"go.etcd.io/etcd/client/pkg/v3/transport"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"

	"github.com/flannel-dns/flannel-dns/src/testenv/loopback"
	"github.com/flannel-dns/flannel-dns/src/testenv/pki"
	"github.com/flannel-dns/flannel-dns/src/testenv/tcpserver"
)

// Options shape the cluster. Domain is the alias; members are member-N.<Domain>.
type Options struct {
	Size   int
	Domain string
	// ServerCert issues a member's server certificate; by default it covers the alias, the member's host
	// name and its address.
	ServerCert func(ca *pki.CA, m *Member, alias string) (pki.Pair, error)
	// TLSMinVersion is etcd's tls-min-version ("TLS1.3"); empty: etcd's default (TLS 1.2).
	TLSMinVersion string
	// ClientURLs gives the client URLs member m advertises (and etcd lists), in place of m.ClientURL. The member
	// serves an http one in clear text on its address and that URL's port, beside its TLS port.
	ClientURLs func(m *Member) []string
	// Name gives member i its name in etcd (any bytes etcd takes, for tests of how names are shown); nil:
	// "member-N". Its host name is member-N.<Domain> either way.
	Name func(i int) string
}

// DefaultServerCert covers the alias, the member's host name and its address.
func DefaultServerCert(ca *pki.CA, m *Member, alias string) (pki.Pair, error) {
	return ca.Issue(pki.Server(m.Name, []string{alias, m.Host}, []net.IP{m.IP}))
}

// Cluster is a running cluster.
type Cluster struct {
	Alias   string
	Port    int // the client port of every member
	Members []*Member
	dir     string
	token   string
	tlsMin  string
	urls    func(m *Member) []string
}

// Member is one etcd member.
type Member struct {
	Name      string
	Host      string // member-N.<domain>, the host name in its advertised client URL
	IP        net.IP
	ClientURL string
	peerPort  int
	server    *pki.Pair
	caFile    string

	mu        sync.Mutex
	etcd      *embed.Etcd
	blackHole *tcpserver.Server
}

// Start starts every member with a server certificate from ca (covering the alias, the member's host name
// and its address) and trusts ca for client certificates. It returns once the cluster has a leader.
func Start(ca *pki.CA, opts Options) (*Cluster, error) {
	dir, err := os.MkdirTemp("", "etcdcluster-")
	if err != nil {
		return nil, bosherr.WrapError(err, "Creating the data directory")
	}
	c := &Cluster{Alias: opts.Domain, dir: dir, token: filepath.Base(dir), tlsMin: opts.TLSMinVersion, urls: opts.ClientURLs}
	if err := c.plan(ca, opts); err != nil {
		c.Close()
		return nil, err
	}
	for _, m := range c.Members {
		if err := c.start(m); err != nil {
			c.Close()
			return nil, err
		}
	}
	for _, m := range c.Members {
		if err := waitReady(m); err != nil {
			c.Close()
			return nil, err
		}
	}
	return c, nil
}

func (c *Cluster) plan(ca *pki.CA, opts Options) error {
	ips := loopback.IPs(opts.Size)
	port, err := loopback.FreePort(ips)
	if err != nil {
		return err
	}
	c.Port = port
	issue := opts.ServerCert
	if issue == nil {
		issue = DefaultServerCert
	}
	for i, ip := range ips {
		label := fmt.Sprintf("member-%d", i)
		m := &Member{Name: label, Host: label + "." + opts.Domain, IP: ip, caFile: ca.CertFile}
		if opts.Name != nil {
			m.Name = opts.Name(i)
		}
		m.ClientURL = "https://" + net.JoinHostPort(m.Host, strconv.Itoa(port))
		if m.peerPort, err = loopback.FreePort([]net.IP{ip}); err != nil {
			return err
		}
		server, err := issue(ca, m, opts.Domain)
		if err != nil {
			return err
		}
		m.server = &server
		c.Members = append(c.Members, m)
	}
	return nil
}

// IPs are the members' addresses, what the alias resolves to.
func (c *Cluster) IPs() []net.IP {
	ips := make([]net.IP, len(c.Members))
	for i, m := range c.Members {
		ips[i] = m.IP
	}
	return ips
}

// Publisher is a DNS server that tests can set names on; dnsserver.Server is one.
type Publisher interface {
	SetAddresses(name string, ips ...net.IP)
}

// Publish sets the alias to every member's address and each member's host name to its own.
func (c *Cluster) Publish(dns Publisher) {
	dns.SetAddresses(c.Alias, c.IPs()...)
	for _, m := range c.Members {
		dns.SetAddresses(m.Host, m.IP)
	}
}

func (c *Cluster) config(m *Member) *embed.Config {
	cfg := embed.NewConfig()
	cfg.Name = m.Name
	cfg.Dir = filepath.Join(c.dir, m.Name)
	peer := url.URL{Scheme: "http", Host: net.JoinHostPort(m.IP.String(), strconv.Itoa(m.peerPort))}
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = c.clientURLs(m)
	cfg.ListenPeerUrls = []url.URL{peer}
	cfg.AdvertisePeerUrls = []url.URL{peer}
	cfg.InitialCluster = c.initialCluster()
	cfg.InitialClusterToken = c.token
	cfg.ClientTLSInfo = transport.TLSInfo{
		CertFile:       m.server.CertFile,
		KeyFile:        m.server.KeyFile,
		TrustedCAFile:  m.caFile,
		ClientCertAuth: true,
	}
	if c.tlsMin != "" {
		cfg.TlsMinVersion = c.tlsMin
	}
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	return cfg
}

// clientURLs are what m listens on (TLS on the cluster's port, and any http port it advertises) and advertises.
func (c *Cluster) clientURLs(m *Member) (listen, advertise []url.URL) {
	listen = []url.URL{{Scheme: "https", Host: net.JoinHostPort(m.IP.String(), strconv.Itoa(c.Port))}}
	advertised := []string{m.ClientURL}
	if c.urls != nil {
		advertised = c.urls(m)
	}
	for _, raw := range advertised {
		u := mustParse(raw)
		advertise = append(advertise, *u)
		if u.Scheme == "http" {
			listen = append(listen, url.URL{Scheme: "http", Host: net.JoinHostPort(m.IP.String(), u.Port())})
		}
	}
	return listen, advertise
}

func (c *Cluster) initialCluster() string {
	parts := make([]string, len(c.Members))
	for i, m := range c.Members {
		parts[i] = fmt.Sprintf("%s=http://%s", m.Name, net.JoinHostPort(m.IP.String(), strconv.Itoa(m.peerPort)))
	}
	return strings.Join(parts, ",")
}

func (c *Cluster) start(m *Member) error {
	e, err := embed.StartEtcd(c.config(m))
	if err != nil {
		return bosherr.WrapErrorf(err, "Starting etcd member '%s'", m.Name)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.etcd = e
	return nil
}

func waitReady(m *Member) error {
	m.mu.Lock()
	e := m.etcd
	m.mu.Unlock()
	select {
	case <-e.Server.ReadyNotify():
		return nil
	case err := <-e.Err():
		return bosherr.WrapErrorf(err, "etcd member '%s' failed", m.Name)
	case <-time.After(time.Minute):
		return bosherr.Errorf("etcd member '%s' not ready after a minute", m.Name)
	}
}

// Stop stops member i; its data stays for Restart.
func (c *Cluster) Stop(i int) {
	m := c.Members[i]
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.etcd != nil {
		m.etcd.Close()
		m.etcd = nil
	}
	if m.blackHole != nil {
		m.blackHole.Close()
		m.blackHole = nil
	}
}

// Restart starts member i again (after Stop or BlackHole) and waits until it serves.
func (c *Cluster) Restart(i int) error {
	c.Stop(i)
	if err := c.start(c.Members[i]); err != nil {
		return err
	}
	return waitReady(c.Members[i])
}

// BlackHole stops member i and puts a listener on its client address that accepts connections and never
// answers, as a VM whose etcd hangs would.
func (c *Cluster) BlackHole(i int) error {
	c.Stop(i)
	m := c.Members[i]
	hole, err := tcpserver.Start(net.JoinHostPort(m.IP.String(), strconv.Itoa(c.Port)), nil)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.blackHole = hole
	return nil
}

// Close stops every member and removes the data.
func (c *Cluster) Close() {
	for i := range c.Members {
		c.Stop(i)
	}
	_ = os.RemoveAll(c.dir) // a temporary directory; nothing to do if it resists
}

func mustParse(raw string) *url.URL {
	u, err := url.Parse(raw)
	if err != nil {
		panic(err) // built from parts that always parse, or a test's own URL
	}
	return u
}
