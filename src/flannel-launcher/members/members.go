// Package members finds etcd's members through the bosh-dns alias over mutual TLS and probes them.
//
//	cluster, err := members.New(cfg, resolver, logger)      // TLS setup; an expired client cert fails here
//	certs, err := cluster.CheckServerCerts(ctx, aliasIPs)   // clear TLS errors before gRPC hides them
//	client, err := cluster.Client()                         // endpoint: the alias URL
//	list, err := cluster.Members(ctx, client)               // every member, probed in parallel
//	members.HealthyURLs(list)
package members

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
	boshlog "github.com/cloudfoundry/bosh-utils/logger"
	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"

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
	dialer       *dialer
	handshakes   *handshakes
	probeTimeout time.Duration
	logger       boshlog.Logger
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

// New builds the TLS setup from cfg.Etcd; resolver resolves the alias and the members' host names.
func New(cfg config.Config, resolver Resolver, logger boshlog.Logger) (*Cluster, error) {
	tlsConfig, err := TLSConfig(cfg.Etcd, time.Now())
	if err != nil {
		return nil, err
	}
	shakes := &handshakes{}
	return &Cluster{
		alias:        cfg.Etcd.Alias,
		port:         cfg.Etcd.Port,
		aliasURL:     cfg.AliasURL(),
		caFile:       cfg.Etcd.CAFile,
		certFile:     cfg.Etcd.CertFile,
		tls:          tlsConfig,
		dialer:       &dialer{resolver: resolver, alias: cfg.Etcd.Alias, handshakes: shakes},
		handshakes:   shakes,
		probeTimeout: cfg.Timing.ProbeTimeout.D(),
		logger:       logger,
	}, nil
}

// Client talks to etcd through the alias URL, so TLS verifies the alias name. The caller closes it.
func (c *Cluster) Client() (*clientv3.Client, error) {
	client, err := clientv3.New(clientv3.Config{
		Endpoints:   []string{c.aliasURL},
		TLS:         c.tls,
		DialOptions: []grpc.DialOption{grpc.WithContextDialer(c.dialer.Dial)},
		Logger:      zap.NewNop(),
	})
	if err != nil {
		return nil, bosherr.WrapErrorf(err, "Creating an etcd client for '%s'", c.aliasURL)
	}
	return client, nil
}

// HTTPClient talks HTTPS to etcd (its v2 API) with Client's TLS setup and dialer: the host name dialed is
// verified, and for the alias the addresses that completed a handshake come first. It follows no redirect: the
// answer is the 30x itself, since a member's redirect could send the request anywhere, in clear text too. The
// caller closes its idle connections.
func (c *Cluster) HTTPClient() *http.Client {
	tlsConfig := c.tls.Clone()
	tlsConfig.NextProtos = nil // HTTP/1.1, which etcd's v2 API serves
	return &http.Client{
		Transport: &http.Transport{TLSClientConfig: tlsConfig,
			DialContext: func(ctx context.Context, _, address string) (net.Conn, error) { return c.dialer.Dial(ctx, address) }},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// Members lists the members and probes each one's client URL in parallel, sorted by name. The list is the
// answering member's own (a serializable request), which needs no leader: a start during an election or a quorum
// loss gets it at once.
func (c *Cluster) Members(ctx context.Context, client *clientv3.Client) ([]Member, error) {
	resp, err := client.MemberList(ctx, clientv3.WithSerializable())
	if err != nil {
		return nil, bosherr.WrapErrorf(err, "Listing etcd members through '%s'", c.aliasURL)
	}
	result := make([]Member, len(resp.Members))
	var wg sync.WaitGroup
	for i, member := range resp.Members {
		wg.Go(func() { result[i] = c.probe(ctx, client, member) })
	}
	wg.Wait()
	slices.SortFunc(result, func(a, b Member) int { return strings.Compare(a.Name, b.Name) })
	for _, m := range result {
		c.logMember(m)
	}
	return result, nil
}

func (c *Cluster) probe(ctx context.Context, client *clientv3.Client, member *pb.Member) Member {
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
	ctx, cancel := context.WithTimeout(ctx, c.probeTimeout)
	defer cancel()
	ips, err := c.resolveHost(ctx, result.ClientURL)
	if err != nil {
		result.Err = err
		return result
	}
	result.Resolves = true
	if err := c.handshakes.failure(ips); err != nil {
		result.Err = bosherr.WrapError(err, "No TLS handshake with its address")
		return result
	}
	c.ask(ctx, client, &result)
	return result
}

func (c *Cluster) ask(ctx context.Context, client *clientv3.Client, m *Member) {
	start := time.Now()
	status, err := c.status(ctx, client, m.ClientURL)
	m.RTT = time.Since(start)
	if err != nil {
		m.Err = bosherr.WrapErrorf(err, "Probing '%s'", m.ClientURL)
		return
	}
	m.Answered = true
	m.Leader = status.Leader == status.Header.MemberId
	m.Version = status.Version
}

func (c *Cluster) resolveHost(ctx context.Context, clientURL string) ([]net.IP, error) {
	u, err := url.Parse(clientURL)
	if err != nil {
		return nil, bosherr.WrapErrorf(err, "Parsing the member's client URL '%s'", clientURL)
	}
	return c.dialer.addresses(ctx, u.Hostname())
}

// status asks one member directly. The raw maintenance client fails fast on a refused connection,
// where the etcd client's default would wait for the member until the probe timeout.
func (c *Cluster) status(ctx context.Context, client *clientv3.Client, clientURL string) (*pb.StatusResponse, error) {
	conn, err := client.Dial(clientURL)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	return pb.NewMaintenanceClient(conn).Status(ctx, &pb.StatusRequest{})
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
