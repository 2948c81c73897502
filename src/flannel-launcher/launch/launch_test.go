package launch_test

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	boshlog "github.com/cloudfoundry/bosh-utils/logger"
	"github.com/miekg/dns"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/config"
	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/launch"
	"github.com/flannel-dns/flannel-dns/src/testenv/loopback"
	"github.com/flannel-dns/flannel-dns/src/testenv/recordingflanneld/record"
	"github.com/flannel-dns/flannel-dns/src/testenv/testlog"
)

var _ = Describe("Launcher.Run", func() {
	var (
		cfg        config.Config
		recordFile string
		logger     boshlog.Logger
		logs       *gbytes.Buffer
		starts     *atomic.Int32
		stop       chan os.Signal
	)

	recorded := func() record.Record {
		rec, err := record.Read(recordFile)
		Expect(err).NotTo(HaveOccurred())
		return rec
	}
	startedFlanneld := func() { Eventually(recordFile, 10*time.Second).Should(BeAnExistingFile()) }
	deadAddresses := func() { dnsServer.SetAddresses(cluster.Alias, loopback.IPs(2)...) }

	BeforeEach(func() {
		cfg = newConfig()
		recordFile = filepath.Join(GinkgoT().TempDir(), "record.json")
		logger, logs = testlog.New()
		starts = new(atomic.Int32)
		stop = make(chan os.Signal, 1)
		DeferCleanup(cluster.Publish, dnsServer)
	})

	Context("with a healthy cluster", func() {
		It("creates the network config, starts flanneld with the alias first, and passes SIGTERM on", func() {
			done := runInBackground(newLauncher(cfg, recordFile, logger, starts), stop)
			startedFlanneld()

			endpoints, _ := recorded().Flag("etcd-endpoints")
			Expect(strings.Split(endpoints, ",")).To(Equal([]string{
				cfg.AliasURL(), cluster.Members[0].ClientURL, cluster.Members[1].ClientURL, cluster.Members[2].ClientURL,
			}))
			Expect(storedNetworkConfig(cfg)).To(MatchJSON(cfg.Network.Desired()))

			stop <- syscall.SIGTERM
			Eventually(done, 5*time.Second).Should(Receive(Equal(runResult{status: 3})))
			Expect(recorded().Signals).To(Equal([]string{"terminated"}))
		})

		It("does not read the v2 store of members that run etcd 3.6, which serves no v2 API", func() {
			done := runInBackground(newLauncher(cfg, recordFile, logger, starts), stop)
			startedFlanneld()

			Expect(logs).To(gbytes.Say("the etcd members run 3.6 or later, which serve no v2 API"))
			Expect(logs.Contents()).NotTo(ContainSubstring("etcd serves no v2 API"), "the v2 API was asked")
			stop <- syscall.SIGTERM
			Eventually(done, 5*time.Second).Should(Receive())
		})

		It("re-resolves the alias while flanneld runs, logs changes, and neither restarts flanneld nor asks etcd", func() {
			done := runInBackground(newLauncher(cfg, recordFile, logger, starts), stop)
			startedFlanneld()
			requestsAtStart := etcdRequests()
			Expect(requestsAtStart).To(BeNumerically(">", 0), "the counter sees the launcher's start-up requests")

			dnsServer.SetAddresses(cluster.Alias, cluster.Members[0].IP, cluster.Members[1].IP)
			Eventually(logs).Should(gbytes.Say(`'%s' changed: added \[\], removed \[%s\]`, cluster.Alias, cluster.Members[2].IP))
			cluster.Publish(dnsServer)
			Eventually(logs).Should(gbytes.Say(`'%s' changed: added \[%s\], removed \[\]`, cluster.Alias, cluster.Members[2].IP))
			Consistently(etcdRequests, 500*time.Millisecond).Should(Equal(requestsAtStart))
			Expect(starts.Load()).To(BeEquivalentTo(1))
			Expect(dnsServer.Queries(cluster.Alias, "udp")).To(BeNumerically(">", 10))

			stop <- syscall.SIGTERM
			Eventually(done, 5*time.Second).Should(Receive())
		})
	})

	It("sets keepalive on flanneld's connections to the etcd port", func() {
		listener, err := net.Listen("tcp", net.JoinHostPort(loopback.IPs(1)[0].String(), strconv.Itoa(cluster.Port)))
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(listener.Close)
		launcher := newLauncher(cfg, recordFile, logger, starts)
		launcher.Starter = withEnv(launcher.Starter, record.DialEnv+"="+listener.Addr().String())
		runInBackground(launcher, stop)
		startedFlanneld()

		Eventually(logs, 10*time.Second).Should(gbytes.Say(`Tuned keepalive: pid=%d fd=\d+ peer=%s idle=4s interval=2s count=3 user_timeout=10s`,
			recorded().PID, listener.Addr()))
	})

	It("leaves out a stopped member", func() {
		cluster.Stop(1)
		DeferCleanup(func() { Expect(cluster.Restart(1)).To(Succeed()) })
		done := runInBackground(newLauncher(cfg, recordFile, logger, starts), stop)
		startedFlanneld()

		endpoints, _ := recorded().Flag("etcd-endpoints")
		Expect(strings.Split(endpoints, ",")).To(Equal([]string{
			cfg.AliasURL(), cluster.Members[0].ClientURL, cluster.Members[2].ClientURL,
		}))
		Expect(logs).To(gbytes.Say(`Member '%s' at %s is left out`, cluster.Members[1].Name, cluster.Members[1].ClientURL))
		stop <- syscall.SIGTERM
		Eventually(done, 5*time.Second).Should(Receive())
	})

	// The network config is there from an earlier start: nothing needs writing, so nothing needs the quorum.
	It("starts flanneld at the first attempt with the quorum lost, when the network config is there", func() {
		done := runInBackground(newLauncher(cfg, recordFile, logger, starts), stop)
		startedFlanneld()
		stop <- syscall.SIGTERM
		Eventually(done, 5*time.Second).Should(Receive())
		Expect(os.Remove(recordFile)).To(Succeed())
		cluster.Stop(1)
		cluster.Stop(2)
		DeferCleanup(func() {
			Expect(cluster.Restart(1)).To(Succeed())
			Expect(cluster.Restart(2)).To(Succeed())
		})
		logger, logs = testlog.New()

		done = runInBackground(newLauncher(cfg, recordFile, logger, starts), stop)
		startedFlanneld()

		endpoints, _ := recorded().Flag("etcd-endpoints")
		Expect(strings.Split(endpoints, ",")).To(Equal([]string{cfg.AliasURL(), cluster.Members[0].ClientURL}))
		Expect(logs.Contents()).NotTo(ContainSubstring("reaching etcd failed"))
		stop <- syscall.SIGTERM
		Eventually(done, 5*time.Second).Should(Receive())
	})

	It("leaves out a member whose name does not resolve here", func() {
		dnsServer.Remove(cluster.Members[0].Host)
		done := runInBackground(newLauncher(cfg, recordFile, logger, starts), stop)
		startedFlanneld()

		endpoints, _ := recorded().Flag("etcd-endpoints")
		Expect(strings.Split(endpoints, ",")).To(Equal([]string{
			cfg.AliasURL(), cluster.Members[1].ClientURL, cluster.Members[2].ClientURL,
		}))
		Expect(logs).To(gbytes.Say(`Member '%s' at %s is left out: .*NXDOMAIN`, cluster.Members[0].Name, cluster.Members[0].ClientURL))
		stop <- syscall.SIGTERM
		Eventually(done, 5*time.Second).Should(Receive())
	})

	It("waits for the alias to appear", func() {
		dnsServer.Remove(cluster.Alias)
		done := runInBackground(newLauncher(cfg, recordFile, logger, starts), stop)
		Eventually(logs).Should(gbytes.Say(`Attempt 2: looking up '%s' at %s: NXDOMAIN`, cluster.Alias, dnsServer.Addr))
		Expect(recordFile).NotTo(BeAnExistingFile())

		cluster.Publish(dnsServer)
		startedFlanneld()
		stop <- syscall.SIGTERM
		Eventually(done, 5*time.Second).Should(Receive(Equal(runResult{status: 3})))
	})

	It("retries while no member answers, then starts flanneld once one does", func() {
		deadAddresses()
		done := runInBackground(newLauncher(cfg, recordFile, logger, starts), stop)
		Eventually(logs).Should(gbytes.Say(`reaching etcd failed, retrying: attempt=1 retry_in=\S+ error='no etcd member answered`))
		Eventually(logs).Should(gbytes.Say(`reaching etcd failed, retrying: attempt=2 `))
		Expect(recordFile).NotTo(BeAnExistingFile())

		cluster.Publish(dnsServer)
		startedFlanneld()
		stop <- syscall.SIGTERM
		Eventually(done, 5*time.Second).Should(Receive(Equal(runResult{status: 3})))
	})

	It("gives up when the startup deadline passes, without starting flanneld", func() {
		deadAddresses()
		cfg.Timing.StartupDeadline = config.Duration(time.Second)
		status, err := newLauncher(cfg, recordFile, logger, starts).Run(stop)

		Expect(status).To(Equal(1))
		var giveUp *launch.GiveUpError
		Expect(errors.As(err, &giveUp)).To(BeTrue(), "%v", err)
		Expect(giveUp.Step).To(Equal("reaching etcd"))
		Expect(err).To(MatchError(MatchRegexp(`The startup deadline passed after ([2-9]|[1-9]\d+) attempts over \S+; the last one failed: no etcd member answered`)))
		Expect(starts.Load()).To(BeZero())
	})

	It("retries while the server certificate does not cover the alias, and gives up at the deadline naming it", func() {
		cfg.Etcd.Alias = "other.test.internal"
		dnsServer.SetAddresses(cfg.Etcd.Alias, cluster.IPs()...)
		cfg.Timing.StartupDeadline = config.Duration(2 * time.Second)
		status, err := newLauncher(cfg, recordFile, logger, starts).Run(stop)

		Expect(status).To(Equal(1))
		var giveUp *launch.GiveUpError
		Expect(errors.As(err, &giveUp)).To(BeTrue(), "%v", err)
		Expect(giveUp.Step).To(Equal("reaching etcd"))
		Expect(logs).To(gbytes.Say("reaching etcd failed, retrying: attempt=1 .*does not cover the alias 'other.test.internal'"))
		Expect(logs).To(gbytes.Say("reaching etcd failed, retrying: attempt=2 "))
		Expect(err).To(MatchError(ContainSubstring("does not cover the alias 'other.test.internal'")))
		Expect(starts.Load()).To(BeZero())
	})

	It("names the last finished attempt's failure when the deadline cuts the next one short", func() {
		cfg.Etcd.Alias = "other.test.internal"
		dnsServer.SetAddresses(cfg.Etcd.Alias, cluster.IPs()...)
		cfg.Timing.StartupDeadline = config.Duration(2 * time.Second)
		cfg.Timing.ProbeTimeout = config.Duration(10 * time.Second) // only the deadline cuts the hung attempt
		silentIP := loopback.IPs(1)[0]
		silent, err := net.Listen("tcp", net.JoinHostPort(silentIP.String(), strconv.Itoa(cluster.Port)))
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(silent.Close)
		done := runInBackground(newLauncher(cfg, recordFile, logger, starts), stop)
		Eventually(logs).Should(gbytes.Say("attempt=1 .*does not cover the alias"))

		// The kernel completes the TCP handshake; nobody answers the TLS one, so an attempt hangs to the deadline.
		dnsServer.SetAddresses(cfg.Etcd.Alias, silentIP)
		var result runResult
		Eventually(done, 5*time.Second).Should(Receive(&result))
		Expect(result.status).To(Equal(1))
		Expect(result.err).To(MatchError(ContainSubstring("does not cover the alias 'other.test.internal'")))
		Expect(starts.Load()).To(BeZero())
	})

	It("stops before flanneld starts when a signal comes", func() {
		dnsServer.SetRcode(cluster.Alias, dns.RcodeServerFailure)
		done := runInBackground(newLauncher(cfg, recordFile, logger, starts), stop)
		Eventually(logs).Should(gbytes.Say(`the server answered SERVFAIL`))

		stop <- syscall.SIGINT
		var result runResult
		Eventually(done).Should(Receive(&result))
		Expect(result.status).To(Equal(1))
		Expect(result.err).To(MatchError(&launch.StoppedError{Signal: "interrupt"}))
		Expect(starts.Load()).To(BeZero())
	})

	It("spaces retries out with jittered backoff that doubles up to backoff_max", func() {
		deadAddresses()
		cfg.Timing.BackoffInitial = config.Duration(100 * time.Millisecond)
		cfg.Timing.BackoffMax = config.Duration(400 * time.Millisecond)
		clock := &recordingClock{waitsBeforeBlocking: 5}
		launcher := newLauncher(cfg, recordFile, logger, starts)
		launcher.Clock = clock
		done := runInBackground(launcher, stop)
		Eventually(clock.waits).Should(HaveLen(6)) // five passed, the sixth blocks

		waits := clock.waits()
		for i, limit := range []time.Duration{100, 200, 400, 400, 400, 400} {
			limit *= time.Millisecond
			Expect(waits[i]).To(BeNumerically(">=", limit/2), "wait %d", i)
			Expect(waits[i]).To(BeNumerically("<=", limit), "wait %d", i)
		}
		stop <- syscall.SIGTERM
		Eventually(done).Should(Receive())
	})
})

// recordingClock notes every wait and lets the first waitsBeforeBlocking of them pass at once; later ones
// never end.
type recordingClock struct {
	waitsBeforeBlocking int
	mu                  sync.Mutex
	recorded            []time.Duration
}

func (c *recordingClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.recorded = append(c.recorded, d)
	ch := make(chan time.Time, 1)
	if len(c.recorded) <= c.waitsBeforeBlocking {
		ch <- time.Now()
	}
	return ch
}

func (c *recordingClock) Ticks(ctx context.Context, d time.Duration) <-chan time.Time {
	return launch.RealClock{}.Ticks(ctx, d)
}

func (c *recordingClock) waits() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.recorded...)
}

func etcdRequests() float64 {
	count, err := etcdRequestsServed()
	Expect(err).NotTo(HaveOccurred())
	return count
}

func storedNetworkConfig(cfg config.Config) string {
	etcd, err := env.etcdClient(cfg)
	Expect(err).NotTo(HaveOccurred())
	defer etcd.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := etcd.Get(ctx, cfg.Etcd.NetworkConfigKey())
	Expect(err).NotTo(HaveOccurred())
	Expect(resp.Kvs).To(HaveLen(1))
	return string(resp.Kvs[0].Value)
}
