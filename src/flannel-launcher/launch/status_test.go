package launch_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	boshlog "github.com/cloudfoundry/bosh-utils/logger"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/config"
	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/launch"
	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/publisher"
	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/status"
	"github.com/flannel-dns/flannel-dns/src/testenv/loopback"
	"github.com/flannel-dns/flannel-dns/src/testenv/recordingflanneld/record"
	"github.com/flannel-dns/flannel-dns/src/testenv/testlog"
)

var _ = Describe("the run's status", func() {
	var (
		cfg        config.Config
		recordFile string
		statusFile string
		logger     boshlog.Logger
		logs       *gbytes.Buffer
		stop       chan os.Signal
	)

	// launcher reports to statusFile; its flanneld writes the subnet file when writesSubnet is set.
	launcher := func(writesSubnet bool, env ...string) launch.Launcher {
		l := newLauncher(cfg, recordFile, logger, new(atomic.Int32))
		if writesSubnet {
			env = append(env, record.SubnetFileEnv+"="+flanneldWrote)
		}
		l.Starter = withEnv(l.Starter, env...)
		l.Status = status.NewRecorder(statusFile, logger, time.Now)
		return l
	}
	current := func() status.Status {
		s, err := status.Read(statusFile)
		Expect(err).NotTo(HaveOccurred())
		return s
	}
	// publish runs the job's subnet-publisher beside the launcher until the spec ends, as root, as monit does.
	publish := func() {
		p, err := publisher.New(cfg.Flanneld.SubnetFile, cfg.Flanneld.PublishedSubnetFile, "", logger)
		Expect(err).NotTo(HaveOccurred())
		ctx, cancel := context.WithCancel(context.Background())
		ticker := time.NewTicker(publisher.Interval)
		done := make(chan struct{})
		go func() {
			defer close(done)
			p.Run(ctx, ticker.C, nil)
		}()
		DeferCleanup(func() {
			cancel()
			ticker.Stop()
			Eventually(done).Should(BeClosed())
		})
	}
	flanneldPID := func() int {
		rec, err := record.Read(recordFile)
		Expect(err).NotTo(HaveOccurred())
		return rec.PID
	}

	BeforeEach(func() {
		cfg = newConfig()
		dir := GinkgoT().TempDir()
		cfg.Flanneld.SubnetFile = filepath.Join(dir, "flanneld", "subnet.env")
		cfg.Flanneld.PublishedSubnetFile = filepath.Join(dir, "flannel", "subnet.env")
		Expect(os.Mkdir(filepath.Dir(cfg.Flanneld.SubnetFile), 0o750)).To(Succeed())
		recordFile = filepath.Join(dir, "record.json")
		statusFile = filepath.Join(dir, "status.json")
		logger, logs = testlog.New()
		stop = make(chan os.Signal, 1)
		DeferCleanup(cluster.Publish, dnsServer)
	})

	It("says why it retries while no member answers, then ready with flanneld's PID once flanneld's subnet file is published", func() {
		dnsServer.SetAddresses(cluster.Alias, loopback.IPs(2)...)
		publish()
		runInBackground(launcher(true), stop)
		Eventually(current).Should(SatisfyAll(
			HaveField("State", status.Retrying), HaveField("Reason", MatchRegexp(`^attempt \d+: no etcd member answered`))))

		cluster.Publish(dnsServer)
		Eventually(current, 10*time.Second).Should(HaveField("State", status.Ready))
		Expect(current().FlanneldPID).To(Equal(flanneldPID()))
		Expect(current().Reason).To(Equal("flanneld wrote its subnet file '" + cfg.Flanneld.SubnetFile + "', published as '" +
			cfg.Flanneld.PublishedSubnetFile + "'"))
		Expect(logs).To(gbytes.Say(`flanneld is ready: subnet_file=`))
	})

	It("waits, once flanneld has written its subnet file, until subnet-publisher has published it", func() {
		runInBackground(launcher(true), stop)
		waiting := SatisfyAll(HaveField("State", status.Starting), HaveField("Reason",
			"waiting for subnet-publisher to publish flanneld's subnet file as '"+cfg.Flanneld.PublishedSubnetFile+"'"))
		Eventually(current, 10*time.Second).Should(waiting)
		Consistently(current, 500*time.Millisecond).Should(waiting)
		publish()
		Eventually(current).Should(HaveField("State", status.Ready))
	})

	It("says why flanneld's subnet file is not published, and does not report ready", func() {
		publish()
		runInBackground(launcher(false, record.SubnetFileEnv+"="+strings.Replace(flanneldWrote, "1450", "$(id)", 1)), stop)
		notPublished := SatisfyAll(HaveField("State", status.Starting), HaveField("Reason", "flanneld wrote a subnet file "+
			"that is not published: The subnet file '"+cfg.Flanneld.SubnetFile+"' is not as flanneld writes it: "+
			`FLANNEL_MTU must be a whole number from 576 to 65535, got "$(id)"`))
		Eventually(current, 10*time.Second).Should(notPublished)
		Consistently(current, 500*time.Millisecond).Should(notPublished)
		Expect(logs).To(gbytes.Say(`ERROR - flanneld wrote a subnet file that is not published: `))
		Expect(cfg.Flanneld.PublishedSubnetFile).NotTo(BeAnExistingFile())
	})

	// flanneld writes its file from the network config it reads at its start; the launcher read it just before.
	DescribeTable("does not report ready on a subnet file of another pod network than the config flanneld started on",
		func(wrote string, reason string) {
			publish()
			runInBackground(launcher(false, record.SubnetFileEnv+"="+wrote), stop)
			offNetwork := SatisfyAll(HaveField("State", status.Starting), HaveField("Reason", "flanneld's subnet file '"+
				cfg.Flanneld.SubnetFile+"' gives "+reason+", but the network config at '"+cfg.Etcd.NetworkConfigKey()+
				"' that flanneld was started on is 198.18.0.0/16 in /24 subnets: the launcher does not report ready; "+
				"restart the job once that config is settled"))
			Eventually(current, 10*time.Second).Should(offNetwork)
			Consistently(current, 500*time.Millisecond).Should(offNetwork)
			Expect(logs).To(gbytes.Say(`ERROR - flanneld's subnet file '`))
		},
		Entry("another network", strings.ReplaceAll(flanneldWrote, "198.18.", "198.19."), "subnet 198.19.3.1/24 of network 198.19.0.0/16"),
		Entry("a wider network", strings.Replace(flanneldWrote, "198.18.0.0/16", "198.18.0.0/15", 1), "subnet 198.18.3.1/24 of network 198.18.0.0/15"),
		Entry("another subnet length", strings.Replace(flanneldWrote, "3.1/24", "3.1/25", 1), "subnet 198.18.3.1/25 of network 198.18.0.0/16"),
	)

	It("takes the network config that etcd holds, not the rendered one, for the pod network flanneld runs on", func() {
		etcd, err := env.etcdClient(cfg)
		Expect(err).NotTo(HaveOccurred())
		defer etcd.Close()
		_, err = etcd.Put(context.Background(), cfg.Etcd.NetworkConfigKey(), `{"Network":"198.19.0.0/16","Backend":{"Type":"vxlan"}}`)
		Expect(err).NotTo(HaveOccurred())
		publish()
		runInBackground(launcher(false, record.SubnetFileEnv+"="+strings.ReplaceAll(flanneldWrote, "198.18.", "198.19.")), stop)
		Eventually(current, 10*time.Second).Should(HaveField("State", status.Ready))
	})

	It("says why it retries while the alias has no answer", func() {
		dnsServer.Remove(cluster.Alias)
		runInBackground(launcher(true), stop)
		Eventually(current).Should(SatisfyAll(
			HaveField("State", status.Retrying), HaveField("Reason", ContainSubstring("looking up '"+cluster.Alias+"'")),
			HaveField("Reason", ContainSubstring("NXDOMAIN"))))
	})

	It("does not take a subnet file left by an earlier run for a write", func() {
		Expect(os.WriteFile(cfg.Flanneld.SubnetFile, []byte(flanneldWrote), 0o644)).To(Succeed())
		publish()
		runInBackground(launcher(false), stop)
		Eventually(recordFile, 10*time.Second).Should(BeAnExistingFile())
		Eventually(current).Should(HaveField("FlanneldPID", flanneldPID()))
		Consistently(current, 500*time.Millisecond).Should(SatisfyAll(HaveField("State", status.Starting),
			HaveField("Reason", "waiting for flanneld to write its subnet file '"+cfg.Flanneld.SubnetFile+"'")))
	})

	It("says why it gave up", func() {
		cfg.Etcd.Alias = "other.test.internal"
		dnsServer.SetAddresses(cfg.Etcd.Alias, cluster.IPs()...)
		_, err := launcher(true).Run(stop)
		Expect(err).To(HaveOccurred())
		Expect(current().State).To(Equal(status.Failed))
		Expect(current().Reason).To(Equal(err.Error()))
		Expect(current().Reason).To(ContainSubstring("does not cover the alias 'other.test.internal'"))
	})

	It("says stopped when a stop signal comes before flanneld starts", func() {
		dnsServer.Remove(cluster.Alias)
		done := runInBackground(launcher(true), stop)
		Eventually(current).Should(HaveField("State", status.Retrying))
		stop <- syscall.SIGINT
		Eventually(done).Should(Receive())
		Expect(current()).To(SatisfyAll(HaveField("State", status.Stopped),
			HaveField("Reason", "stopped by interrupt before flanneld started")))
	})

	It("says that flanneld exited, with its status", func() {
		exitStatus, err := launcher(false, record.ExitEnv+"=4").Run(stop)
		Expect(err).NotTo(HaveOccurred())
		Expect(exitStatus).To(Equal(4))
		Expect(current()).To(SatisfyAll(HaveField("State", status.Failed), HaveField("Reason", "flanneld exited with status 4")))
	})

	It("says stopped once a stop signal comes, and keeps saying so after flanneld exits", func() {
		publish()
		done := runInBackground(launcher(true, record.SignalExitEnv+"=1"), stop)
		Eventually(current, 10*time.Second).Should(HaveField("State", status.Ready))
		stop <- syscall.SIGTERM
		Eventually(done, 5*time.Second).Should(Receive())
		Expect(current()).To(SatisfyAll(HaveField("State", status.Stopped),
			HaveField("Reason", "stop signal (terminated) passed on to flanneld")))
	})
})

// flanneldWrote is what flannel 0.28 writes for the suite's network on a 1500-byte link.
const flanneldWrote = "FLANNEL_NETWORK=198.18.0.0/16\nFLANNEL_SUBNET=198.18.3.1/24\nFLANNEL_MTU=1450\nFLANNEL_IPMASQ=true\n"
