package members_test

import (
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/config"
	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/resolve"
	"github.com/flannel-dns/flannel-dns/src/testenv/dnsserver"
	"github.com/flannel-dns/flannel-dns/src/testenv/etcdcluster"
	"github.com/flannel-dns/flannel-dns/src/testenv/pki"
)

func TestMembers(t *testing.T) {
	RegisterFailHandler(Fail)
	// generous: two shared cores run several suites at once
	SetDefaultEventuallyTimeout(5 * time.Second)
	RunSpecs(t, "Members Suite")
}

// Generous: under the race detector on a busy machine a TLS handshake alone can take hundreds of milliseconds.
const probeTimeout = 2 * time.Second

// One cluster for the suite: starting etcd under the race detector is the slow part. Specs that stop or
// hide a member put it back in a DeferCleanup.
var (
	ca       *pki.CA
	client   pki.Pair
	cluster  *etcdcluster.Cluster
	dns      *dnsserver.Server
	resolver *resolve.Resolver
)

var _ = BeforeSuite(func() {
	started := time.Now()
	closeEnv, err := startEnv(GinkgoT().TempDir())
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(closeEnv)
	GinkgoWriter.Printf("etcd cluster and DNS server started in %s\n", time.Since(started))
})

var _ = BeforeEach(func() {
	cluster.Publish(dns)
})

// startEnv sets the package's variables up; the benchmarks use it too, outside Ginkgo.
func startEnv(dir string) (func(), error) {
	var err error
	if ca, err = pki.NewCA(dir, "etcd-ca"); err != nil {
		return nil, err
	}
	if client, err = ca.Issue(pki.Client("flanneld")); err != nil {
		return nil, err
	}
	if dns, err = dnsserver.Start(); err != nil {
		return nil, err
	}
	if cluster, err = etcdcluster.Start(ca, etcdcluster.Options{Size: 3, Domain: "etcd.test.internal"}); err != nil {
		_ = dns.Close()
		return nil, err
	}
	cluster.Publish(dns)
	resolver = resolve.ForServers([]string{dns.Addr}, time.Second)
	return func() {
		cluster.Close()
		_ = dns.Close()
	}, nil
}

func launcherConfig() config.Config {
	cfg := config.Default()
	cfg.Etcd.Alias = cluster.Alias
	cfg.Etcd.Port = cluster.Port
	cfg.Etcd.CAFile = ca.CertFile
	cfg.Etcd.CertFile = client.CertFile
	cfg.Etcd.KeyFile = client.KeyFile
	cfg.DNS.Server = dns.Addr
	cfg.Timing.ProbeTimeout = config.Duration(probeTimeout)
	return cfg
}
