package launch_test

import (
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"testing"
	"time"

	boshlog "github.com/cloudfoundry/bosh-utils/logger"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/config"
	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/flanneld"
	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/launch"
	"github.com/flannel-dns/flannel-dns/testenv/dnsserver"
	"github.com/flannel-dns/flannel-dns/testenv/etcdcluster"
	"github.com/flannel-dns/flannel-dns/testenv/pki"
	"github.com/flannel-dns/flannel-dns/testenv/recordingflanneld/record"
)

func TestLaunch(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Launch Suite")
}

var (
	recordingFlanneld string
	ca                *pki.CA
	client            pki.Pair
	cluster           *etcdcluster.Cluster
	dnsServer         *dnsserver.Server
	prefixes          atomic.Int32
)

var _ = SynchronizedBeforeSuite(func() []byte {
	path, err := gexec.Build("github.com/flannel-dns/flannel-dns/testenv/recordingflanneld")
	Expect(err).NotTo(HaveOccurred())
	return []byte(path)
}, func(path []byte) {
	recordingFlanneld = string(path)
	var err error
	ca, err = pki.NewCA(GinkgoT().TempDir(), "etcd-ca")
	Expect(err).NotTo(HaveOccurred())
	client, err = ca.Issue(pki.Client("flanneld"))
	Expect(err).NotTo(HaveOccurred())
	cluster, err = etcdcluster.Start(ca, etcdcluster.Options{Size: 3, Domain: "etcd.test.internal"})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(cluster.Close)
	dnsServer, err = dnsserver.Start()
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(dnsServer.Close)
	cluster.Publish(dnsServer)
})

var _ = SynchronizedAfterSuite(func() {}, func() {
	gexec.CleanupBuildArtifacts()
})

// newConfig points at the suite's cluster and DNS server, with a network config key of its own and short
// timings so that retries show within a test.
func newConfig() config.Config {
	cfg := config.Default()
	cfg.Etcd = config.Etcd{
		Alias: cluster.Alias, Port: cluster.Port,
		Prefix: fmt.Sprintf("/test-%d-%d/network", GinkgoParallelProcess(), prefixes.Add(1)),
		CAFile: ca.CertFile, CertFile: client.CertFile, KeyFile: client.KeyFile,
	}
	cfg.DNS.Server = dnsServer.Addr
	cfg.Network.CIDR = "198.18.0.0/16"
	cfg.Flanneld.Path = recordingFlanneld
	cfg.Flanneld.Iface = "lo"
	cfg.Timing = config.Timing{
		StartupDeadline: config.Duration(20 * time.Second),
		DNSTimeout:      config.Duration(500 * time.Millisecond),
		ProbeTimeout:    config.Duration(500 * time.Millisecond),
		ResolveInterval: config.Duration(50 * time.Millisecond),
		BackoffInitial:  config.Duration(20 * time.Millisecond),
		BackoffMax:      config.Duration(100 * time.Millisecond),
	}
	return cfg
}

// newLauncher runs the recording flanneld, writing its record to recordFile, and logs to logs.
func newLauncher(cfg config.Config, recordFile string, logs io.Writer, starts *atomic.Int32) launch.Launcher {
	launcher, err := launch.New(cfg, boshlog.NewWriterLogger(boshlog.LevelDebug, io.MultiWriter(logs, GinkgoWriter)))
	Expect(err).NotTo(HaveOccurred())
	env := append(os.Environ(), record.FileEnv+"="+recordFile, record.SignalExitEnv+"=3")
	launcher.Starter = countingStarter{
		ExecStarter: flanneld.ExecStarter{Stdout: GinkgoWriter, Stderr: GinkgoWriter, Env: env},
		starts:      starts,
	}
	launcher.KillAfter = time.Second
	return launcher
}

type countingStarter struct {
	flanneld.ExecStarter
	starts *atomic.Int32
}

func (s countingStarter) Start(path string, args []string) (flanneld.Process, error) {
	s.starts.Add(1)
	return s.ExecStarter.Start(path, args)
}

// runResult is what Launcher.Run returned.
type runResult struct {
	status int
	err    error
}

func runInBackground(launcher launch.Launcher, stop chan os.Signal) chan runResult {
	done := make(chan runResult, 1)
	go func() {
		status, err := launcher.Run(stop)
		done <- runResult{status: status, err: err}
	}()
	return done
}
