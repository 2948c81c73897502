package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	"github.com/onsi/gomega/gexec"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/config"
	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/status"
	"github.com/flannel-dns/flannel-dns/src/testenv/loopback"
	"github.com/flannel-dns/flannel-dns/src/testenv/pki"
	"github.com/flannel-dns/flannel-dns/src/testenv/recordingflanneld/record"
)

var _ = Describe("flannel-launcher run --status and wait-ready", func() {
	var (
		cfg        config.Config
		recordFile string
		statusFile string
	)

	// run starts the launcher with a flanneld that writes its subnet file.
	run := func() *gexec.Session {
		return start(recordFile, []string{record.SubnetFileEnv + "=" + flanneldWrote},
			"run", "--config", writeConfig(cfg), "--status", statusFile)
	}
	// publish runs the job's subnet-publisher, as root, as monit does.
	publish := func() {
		session, err := gexec.Start(exec.Command(binaries.Publisher, "--from", cfg.Flanneld.SubnetFile,
			"--to", cfg.Flanneld.PublishedSubnetFile), GinkgoWriter, GinkgoWriter)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() {
			session.Terminate()
			Eventually(session).Should(gexec.Exit(0))
		})
	}
	waitReady := func(timeout string) *gexec.Session {
		session := start(filepath.Join(GinkgoT().TempDir(), "unused.json"), nil,
			"wait-ready", "--config", writeConfig(cfg), "--status", statusFile, "--timeout", timeout)
		Eventually(session, 30*time.Second).Should(gexec.Exit())
		return session
	}
	current := func() status.Status {
		s, err := status.Read(statusFile)
		Expect(err).NotTo(HaveOccurred())
		return s
	}

	BeforeEach(func() {
		cfg = newConfig()
		dir := GinkgoT().TempDir()
		cfg.Flanneld.SubnetFile = filepath.Join(dir, "flanneld", "subnet.env")
		cfg.Flanneld.PublishedSubnetFile = filepath.Join(dir, "flannel", "subnet.env")
		Expect(os.Mkdir(filepath.Dir(cfg.Flanneld.SubnetFile), 0o750)).To(Succeed())
		recordFile = filepath.Join(dir, "record.json")
		statusFile = filepath.Join(dir, "status.json")
		DeferCleanup(cluster.Publish, dnsServer)
	})

	It("exits 0 once flanneld's subnet file is published, printing each step", func() {
		publish()
		run()
		session := waitReady("20s")
		Expect(session).To(gexec.Exit(0))
		Expect(session.Out).To(gbytes.Say(`flanneld: ready: flanneld wrote its subnet file '` + cfg.Flanneld.SubnetFile +
			`', published as '` + cfg.Flanneld.PublishedSubnetFile + `'\n`))
		Expect(session.Out).To(gbytes.Say(`flanneld is ready\n`))
		Expect(os.ReadFile(cfg.Flanneld.PublishedSubnetFile)).To(Equal([]byte(flanneldWrote)))
	})

	It("exits 1 at the timeout while no subnet-publisher runs, saying what it waits for", func() {
		run()
		session := waitReady("3s")
		Expect(session).To(gexec.Exit(1))
		Expect(session.Err).To(gbytes.Say(`flanneld is not ready: still starting after 3s: waiting for subnet-publisher to ` +
			`publish flanneld's subnet file as '` + cfg.Flanneld.PublishedSubnetFile + `'\n`))
	})

	It("exits 1 when flanneld writes a subnet file that is not published, naming what is wrong in it", func() {
		publish()
		start(recordFile, []string{record.SubnetFileEnv + "=" + strings.Replace(flanneldWrote, "true", "true; id", 1)},
			"run", "--config", writeConfig(cfg), "--status", statusFile)
		session := waitReady("3s")
		Expect(session).To(gexec.Exit(1))
		Expect(session.Err).To(gbytes.Say(`flanneld is not ready: still starting after 3s: flanneld wrote a subnet file that is ` +
			`not published: The subnet file '` + cfg.Flanneld.SubnetFile + `' is not as flanneld writes it: FLANNEL_IPMASQ must be ` +
			`true or false, got "true; id"\n`))
		Expect(cfg.Flanneld.PublishedSubnetFile).NotTo(BeAnExistingFile())
	})

	It("replaces an earlier run's status at once, so that it never counts as ready", func() {
		Expect(status.Write(statusFile, status.Status{State: status.Ready, Started: time.Now().Add(-time.Hour)})).To(Succeed())
		before := time.Now()
		dnsServer.Remove(cluster.Alias)
		run()
		Eventually(current).Should(HaveField("Started", BeTemporally(">=", before.Truncate(time.Second))))
		Expect(current().State).NotTo(Equal(status.Ready))
	})

	It("exits 1 at the timeout with the run's reason while etcd's certificate is not signed by the CA in etcd.ca_file", func() {
		other, err := pki.NewCA(GinkgoT().TempDir(), "other-ca")
		Expect(err).NotTo(HaveOccurred())
		cfg.Etcd.CAFile = other.CertFile
		run()
		session := waitReady("2s")
		Expect(session).To(gexec.Exit(1))
		Expect(session.Err).To(gbytes.Say(`flanneld is not ready: still retrying after 2s: attempt \d+: .*is not signed by the CA in etcd.ca_file '%s'`, other.CertFile))
	})

	It("exits 1 at the timeout with the last reason while no etcd member answers", func() {
		dnsServer.SetAddresses(cluster.Alias, loopback.IPs(2)...)
		run()
		session := waitReady("2s")
		Expect(session).To(gexec.Exit(1))
		Expect(session.Out).To(gbytes.Say(`flanneld: retrying: attempt \d+: no etcd member answered`))
		Expect(session.Err).To(gbytes.Say(`flanneld is not ready: still retrying after 2s: attempt \d+: no etcd member answered at the addresses of '%s'`, cluster.Alias))
	})

	It("exits 1 at the timeout with the last reason while the alias has no answer", func() {
		dnsServer.Remove(cluster.Alias)
		run()
		session := waitReady("2s")
		Expect(session).To(gexec.Exit(1))
		Expect(session.Err).To(gbytes.Say(`flanneld is not ready: still retrying after 2s: looking up '%s' at %s: NXDOMAIN`, cluster.Alias, dnsServer.Addr))
	})

	It("exits 1 when the run's config is bad, with the problem, which run put into the status file", func() {
		cfg.Etcd.CAFile = "/nonexistent/ca.crt"
		session := run()
		Eventually(session, 5*time.Second).Should(gexec.Exit(2))
		Expect(current()).To(SatisfyAll(HaveField("State", status.Failed),
			HaveField("Reason", ContainSubstring("etcd.ca_file: cannot read '/nonexistent/ca.crt'"))))
	})

	// The status file is in a directory that flanneld's container (vcap) can write; post-start prints to root's terminal.
	It("prints the run's reason with what a terminal would act on escaped, as check does", func() {
		reason := "stopped\x1b[2J\nflanneld is ready\u009b"
		Expect(status.Write(statusFile, status.Status{State: status.Failed, Reason: reason, Started: time.Now()})).To(Succeed())

		session := waitReady("5s")

		Expect(session).To(gexec.Exit(1))
		Expect(string(session.Out.Contents())).To(Equal(`flanneld: failed: stopped\x1b[2J\nflanneld is ready\u009b` + "\n"))
		Expect(string(session.Err.Contents())).To(Equal(`flanneld is not ready: the launcher failed: stopped\x1b[2J\nflanneld is ready\u009b` + "\n"))
	})

	It("exits 1 when no run has written a status", func() {
		session := waitReady("1s")
		Expect(session).To(gexec.Exit(1))
		Expect(session.Err).To(gbytes.Say(`flanneld is not ready: the launcher wrote no status to '%s' in 1s`, statusFile))
	})

	// post-start runs it as root; flanneld's container (vcap) can write in the status file's directory.
	DescribeTable("exits 1 at its timeout, naming what sits at the status path instead of a status",
		func(plant func(path string), message string) {
			plant(statusFile)
			session := start(filepath.Join(GinkgoT().TempDir(), "unused.json"), nil,
				"wait-ready", "--config", writeConfig(cfg), "--status", statusFile, "--timeout", "1s")
			Eventually(session, 10*time.Second).Should(gexec.Exit(1))
			Expect(session.Err).To(gbytes.Say(`flanneld is not ready: No status after 1s: .*'%s' %s`, statusFile, message))
		},
		Entry("a named pipe, which no one writes", func(path string) {
			Expect(syscall.Mkfifo(path, 0o600)).To(Succeed())
			DeferCleanup(func() { // lets a reader stuck in open() go on
				if pipe, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
					pipe.Close()
				}
			})
		}, "is not a regular file but a named pipe"),
		Entry("a link to /dev/zero, which has no end", func(path string) {
			Expect(os.Symlink("/dev/zero", path)).To(Succeed())
		}, "is a symbolic link"),
		Entry("a directory", func(path string) {
			Expect(os.Mkdir(path, 0o700)).To(Succeed())
		}, "is not a regular file but a directory"),
	)

	DescribeTable("exits 2 on a usage error",
		func(message string, args ...string) {
			session := start(recordFile, nil, append([]string{"wait-ready"}, args...)...)
			Eventually(session, 5*time.Second).Should(gexec.Exit(2))
			Expect(session.Err).To(gbytes.Say(message))
		},
		Entry("no --status", `wait-ready: --config and --status are required`, "--config", "x.json"),
		Entry("no --config", `wait-ready: --config and --status are required`, "--status", "s.json"),
		Entry("a zero timeout", `wait-ready: --timeout must be longer than zero, got '0s'`, "--config", "x.json", "--status", "s.json", "--timeout", "0s"),
		Entry("a timeout without a unit", `wait-ready: invalid value "60" for flag -timeout`, "--config", "x.json", "--status", "s.json", "--timeout", "60"),
	)
})

// flanneldWrote is what flannel 0.28 writes for the suite's network on a 1500-byte link.
const flanneldWrote = "FLANNEL_NETWORK=198.18.0.0/16\nFLANNEL_SUBNET=198.18.3.1/24\nFLANNEL_MTU=1450\nFLANNEL_IPMASQ=true\n"
