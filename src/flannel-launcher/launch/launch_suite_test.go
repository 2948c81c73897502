package launch_test

import (
	"fmt"
	"os"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	boshlog "github.com/cloudfoundry/bosh-utils/logger"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/config"
	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/flanneld"
	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/launch"
	"github.com/flannel-dns/flannel-dns/src/testenv/dnsserver"
	"github.com/flannel-dns/flannel-dns/src/testenv/etcdcluster"
	"github.com/flannel-dns/flannel-dns/src/testenv/recordingflanneld/record"
)

func TestLaunch(t *testing.T) {
	RegisterFailHandler(Fail)
	// generous: two shared cores run several suites at once
	SetDefaultEventuallyTimeout(5 * time.Second)
	RunSpecs(t, "Launch Suite")
}

var (
	recordingFlanneld string
	env               *environment
	cluster           *etcdcluster.Cluster
	dnsServer         *dnsserver.Server
	prefixes          atomic.Int32
)

var _ = SynchronizedBeforeSuite(func() []byte {
	path, err := gexec.Build("github.com/flannel-dns/flannel-dns/src/testenv/recordingflanneld")
	Expect(err).NotTo(HaveOccurred())
	return []byte(path)
}, func(path []byte) {
	recordingFlanneld = string(path)
	var err error
	env, err = startEnvironment()
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(env.close)
	cluster, dnsServer = env.cluster, env.dns
})

var _ = SynchronizedAfterSuite(func() {}, func() {
	gexec.CleanupBuildArtifacts()
})

func newConfig() config.Config {
	cfg := env.config(fmt.Sprintf("test-%d-%d", GinkgoParallelProcess(), prefixes.Add(1)), recordingFlanneld)
	cfg.Timing = shortTimings()
	return cfg
}

// newLauncher runs the recording flanneld, writing its record to recordFile, and counts its starts.
func newLauncher(cfg config.Config, recordFile string, logger boshlog.Logger, starts *atomic.Int32) launch.Launcher {
	launcher, err := launch.New(cfg, logger)
	Expect(err).NotTo(HaveOccurred())
	flanneldEnv := append(os.Environ(), record.FileEnv+"="+recordFile, record.SignalExitEnv+"=3")
	launcher.Starter = countingStarter{
		ExecStarter: flanneld.ExecStarter{Stdout: GinkgoWriter, Stderr: GinkgoWriter, Env: flanneldEnv},
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

// runInBackground runs the launcher until it returns; a spec that ends first, passing or failing, stops it
// as bpm would, so that no flanneld outlives the spec.
func runInBackground(launcher launch.Launcher, stop chan os.Signal) chan runResult {
	done := make(chan runResult, 1)
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		status, err := launcher.Run(stop)
		done <- runResult{status: status, err: err}
	}()
	DeferCleanup(func() {
		select {
		case stop <- syscall.SIGTERM:
		default: // a signal is pending already
		}
		Eventually(finished, 10*time.Second).Should(BeClosed())
	})
	return done
}

// withEnv adds environment variables for the recording flanneld.
func withEnv(starter flanneld.Starter, vars ...string) flanneld.Starter {
	counting := starter.(countingStarter)
	counting.Env = append(append([]string(nil), counting.Env...), vars...)
	return counting
}
