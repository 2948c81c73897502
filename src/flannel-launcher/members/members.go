// Package members finds etcd's members through the bosh-dns alias over mutual TLS and probes them, on one TLS
// connection per address.
//
//	cluster, err := members.New(cfg, resolver, logger)     // TLS setup; an expired client cert fails here
//	pass := cluster.NewPass()                              // one attempt's connections
//	defer pass.Close()
//	certs, err := pass.CheckServerCerts(ctx, aliasIPs)     // clear TLS errors before gRPC hides them
//	list, err := pass.Members(ctx)                         // every member, probed in parallel
//	client, err := pass.Client()                           // endpoint: the alias URL
//	members.HealthyURLs(list)
package members

import (
	"context"
	"crypto/tls"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
	boshlog "github.com/cloudfoundry/bosh-utils/logger"
	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/credentials"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/config"
)

// RequestTimeout bounds one pass of etcd requests (certificate check, member list, probes, network config),
// so that a member that stops answering mid-pass costs a retry in `run` and a prompt "not ready" in `check`,
// not the whole startup deadline.
const RequestTimeout = 5 * time.Second

// Cluster is the etcd cluster behind the alias.
type Cluster struct {
	alias        string
	port         int
	aliasURL     string
	caFile       string
	certFile     string
	tls          *tls.Config
	creds        credentials.TransportCredentials
	resolver     Resolver
	probeTimeout time.Duration
	leaveOutLate bool
	logger       boshlog.Logger
}

// Resolver finds a host's addresses; resolve.Resolver is one.
type Resolver interface {
	Lookup(ctx context.Context, name string) ([]net.IP, error)
}

// Member is one etcd member as this VM sees it.
type Member struct {
	ID        uint64
	Name      string
	ClientURL string
	Resolves  bool // its host name resolves here
	Answered  bool // it answered a status request within the probe timeout
	Leader    bool
	Version   string
	RTT       time.Duration
	Err       error // why it is not healthy
}

// Healthy members go into flanneld's endpoints.
func (m Member) Healthy() bool {
	return m.Resolves && m.Answered
}

// New builds the TLS setup from cfg.Etcd; resolver resolves the alias and the members' host names. A pass leaves
// out the addresses and members that are late once a majority answered, unless WaitForAll is called.
func New(cfg config.Config, resolver Resolver, logger boshlog.Logger) (*Cluster, error) {
	tlsConfig, err := TLSConfig(cfg.Etcd, time.Now())
	if err != nil {
		return nil, err
	}
	return &Cluster{
		alias:        cfg.Etcd.Alias,
		port:         cfg.Etcd.Port,
		aliasURL:     cfg.AliasURL(),
		caFile:       cfg.Etcd.CAFile,
		certFile:     cfg.Etcd.CertFile,
		tls:          tlsConfig,
		creds:        checkedCreds{credentials.NewTLS(tlsConfig)},
		resolver:     resolver,
		probeTimeout: cfg.Timing.ProbeTimeout.D(),
		leaveOutLate: true,
		logger:       logger,
	}, nil
}

// WaitForAll makes every handshake and probe run to its end or its probe timeout, as a report wants them.
func (c *Cluster) WaitForAll() {
	c.leaveOutLate = false
}

// addresses are the host's addresses from the resolver, or the host itself when it is an address.
func (c *Cluster) addresses(ctx context.Context, host string) ([]net.IP, error) {
	if ip := net.ParseIP(host); ip != nil {
		return []net.IP{ip}, nil
	}
	return c.resolver.Lookup(ctx, host)
}

// Members lists the members through the client and probes each one in parallel, on the connection to its
// address that CheckServerCerts opened, sorted by name. The list is the answering member's own (a serializable
// request), which needs no leader: a start during an election or a quorum loss gets it at once.
func (p *Pass) Members(ctx context.Context) ([]Member, error) {
	client, err := p.Client()
	if err != nil {
		return nil, err
	}
	resp, err := client.MemberList(ctx, clientv3.WithSerializable())
	if err != nil {
		return nil, bosherr.WrapErrorf(err, "Listing etcd members through '%s'", p.cluster.aliasURL)
	}
	result := make([]Member, len(resp.Members))
	settle(ctx, len(resp.Members), p.cluster.leaveOutLate, func(ctx context.Context, i int) bool {
		result[i] = p.probe(ctx, client, resp.Members[i])
		return result[i].Healthy()
	})
	slices.SortFunc(result, func(a, b Member) int { return strings.Compare(a.Name, b.Name) })
	for _, m := range result {
		p.cluster.logMember(m)
	}
	return result, nil
}

func (p *Pass) probe(ctx context.Context, client *clientv3.Client, member *pb.Member) Member {
	result := Member{ID: member.ID, Name: member.Name}
	if len(member.ClientURLs) == 0 {
		result.Err = bosherr.Error("the member has no client URL (not started yet)")
		return result
	}
	var err error
	if result.ClientURL, err = clientURL(member.ClientURLs); err != nil {
		result.Err = err
		return result
	}
	probeCtx, cancel := context.WithTimeout(ctx, p.cluster.probeTimeout)
	defer cancel()
	u, err := url.Parse(result.ClientURL)
	if err != nil {
		result.Err = bosherr.WrapErrorf(err, "Parsing the member's client URL '%s'", result.ClientURL)
		return result
	}
	ips, err := p.cluster.addresses(probeCtx, u.Hostname())
	if err != nil {
		result.Err = err
		return result
	}
	result.Resolves = true
	conn, release, err := p.conn(probeCtx, client, u.Host, ips)
	if err != nil {
		result.Err = err
		return result
	}
	defer release()
	p.ask(probeCtx, conn, &result)
	return result
}

func (p *Pass) ask(ctx context.Context, conn pb.MaintenanceClient, m *Member) {
	start := time.Now()
	status, err := conn.Status(ctx, &pb.StatusRequest{})
	m.RTT = time.Since(start)
	lateErr, cutLate := late(ctx)
	switch {
	case err != nil && cutLate:
		m.Err = bosherr.Errorf("Probing '%s': no answer within %s, by when %d of the %d members had answered",
			m.ClientURL, lateErr.waited.Round(time.Millisecond), lateErr.succeeded, lateErr.of)
		return
	case err != nil:
		m.Err = bosherr.WrapErrorf(err, "Probing '%s'", m.ClientURL)
		return
	case status.Header == nil || status.Header.MemberId != m.ID:
		m.Err = bosherr.Errorf("Probing '%s': another member answered at its address", m.ClientURL)
		return
	}
	m.Answered = true
	m.Leader = status.Leader == status.Header.MemberId
	m.Version = status.Version
}

func (c *Cluster) logMember(m Member) {
	if m.Healthy() {
		c.logger.Info(logTag, "Member '%s' at %s is healthy (version %s, leader %t, %s)",
			m.Name, m.ClientURL, m.Version, m.Leader, m.RTT.Round(time.Microsecond))
		return
	}
	c.logger.Warn(logTag, "Member '%s' at %s is left out: %s", m.Name, m.ClientURL, m.Err)
}

// HealthyURLs are the client URLs of the healthy members, in order.
func HealthyURLs(list []Member) []string {
	var urls []string
	for _, m := range list {
		if m.Healthy() {
			urls = append(urls, m.ClientURL)
		}
	}
	return urls
}

const logTag = "members"
