package spectests_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"
	"golang.org/x/sys/unix"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/config"
)

// builtPublisher is subnet-publisher built once for the suite, removed after it.
var builtPublisher = sync.OnceValues(func() (string, error) {
	return gexec.Build("github.com/flannel-dns/flannel-dns/src/flannel-launcher/cmd/subnet-publisher")
})

// bin/subnet-publisher, run for real as root: its paths moved into a temporary directory, the package's
// publisher replaced by one built from this tree.
var _ = AfterSuite(gexec.CleanupBuildArtifacts)

var _ = Describe("bin/subnet-publisher", func() {
	const packaged = "/var/vcap/packages/flannel-launcher/bin/subnet-publisher"
	var (
		script, dir, publisher, from, to, pidfile, kept string
		launcher                                        config.Config
	)

	ctl := func(args ...string) (string, error) {
		out, err := exec.Command("bash", append([]string{"-c", script, "subnet-publisher"}, args...)...).CombinedOutput()
		return string(out), err
	}
	// runs tells whether pid is a live process (not gone, not a zombie) running the publisher.
	runs := func(pid int) bool {
		cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		return err == nil && strings.HasPrefix(string(cmdline), publisher+"\x00")
	}
	pidInFile := func() int {
		data, err := os.ReadFile(pidfile)
		Expect(err).NotTo(HaveOccurred())
		pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
		Expect(err).NotTo(HaveOccurred())
		return pid
	}
	publishers := func() int {
		count := 0
		entries, err := os.ReadDir("/proc")
		Expect(err).NotTo(HaveOccurred())
		for _, e := range entries {
			if pid, err := strconv.Atoi(e.Name()); err == nil && runs(pid) {
				count++
			}
		}
		return count
	}

	BeforeEach(func() {
		rendered, err := renderer.Render(flanneld, withTLS(nil), worker(0))
		Expect(err).NotTo(HaveOccurred())
		script = string(rendered.Files["bin/subnet-publisher"])
		expectBashSyntax(script)
		Expect(config.Default().Flanneld.SubnetFile).To(Equal("/var/vcap/sys/run/flanneld/subnet.env"))
		launcher, err = config.Parse(rendered.Files[launcherConfig])
		Expect(err).NotTo(HaveOccurred())
		expectPackagedExecutable(packaged)

		built, err := builtPublisher()
		Expect(err).NotTo(HaveOccurred())
		dir = GinkgoT().TempDir()
		publisher = filepath.Join(dir, "subnet-publisher")
		data, err := os.ReadFile(built)
		Expect(err).NotTo(HaveOccurred())
		Expect(os.WriteFile(publisher, data, 0o755)).To(Succeed())
		from = filepath.Join(dir, "flanneld", "subnet.env")
		to = filepath.Join(dir, "flannel", "subnet.env")
		// The run directory is the agent's tmpfs of a stemcell: mode 1777, root:vcap (nogroup here).
		run := filepath.Join(dir, "sys-run")
		Expect(os.Mkdir(run, 0o755)).To(Succeed())
		Expect(os.Chmod(run, os.ModeSticky|0o777)).To(Succeed())
		Expect(os.Chown(run, 0, 65534)).To(Succeed())
		pidfile = filepath.Join(run, "flanneld-subnet-publisher", "subnet-publisher.pid")
		kept = filepath.Join(dir, "data", "subnet.env")
		Expect(os.Mkdir(filepath.Dir(from), 0o750)).To(Succeed())
		for path, moved := range map[string]string{
			packaged:                                      publisher,
			launcher.Flanneld.SubnetFile:                  from,
			launcher.Flanneld.PublishedSubnetFile:         to,
			"/var/vcap/sys/run/flanneld-subnet-publisher": filepath.Dir(pidfile),
			"/var/vcap/sys/log/flanneld-subnet-publisher": filepath.Join(dir, "log"),
			"/var/vcap/data/flanneld-subnet-publisher":    filepath.Dir(kept),
			"/var/vcap/data/flanneld/status.json":         filepath.Join(dir, "status.json"),
		} {
			Expect(script).To(ContainSubstring(path))
			script = strings.ReplaceAll(script, path, moved)
		}
		script = withRunDirsLib(rendered, script)
		DeferCleanup(func() {
			out, err := ctl("stop")
			Expect(err).NotTo(HaveOccurred(), out)
		})
	})

	It("publishes flanneld's subnet file at the launcher's published_subnet_file, from its subnet_file", func() {
		out, err := ctl("start")
		Expect(err).NotTo(HaveOccurred(), out)
		flanneld := "FLANNEL_NETWORK=198.18.0.0/15\nFLANNEL_SUBNET=198.18.3.1/24\nFLANNEL_MTU=1450\nFLANNEL_IPMASQ=true\n"
		Expect(os.WriteFile(from, []byte(flanneld), 0o644)).To(Succeed())
		Eventually(func() (string, error) {
			data, err := os.ReadFile(to)
			return string(data), err
		}).Should(Equal(flanneld))
	})

	It("keeps a copy on the ephemeral disk and restores it after a reboot emptied /run, before flanneld writes", func() {
		out, err := ctl("start")
		Expect(err).NotTo(HaveOccurred(), out)
		flanneld := "FLANNEL_NETWORK=198.18.0.0/15\nFLANNEL_SUBNET=198.18.3.1/24\nFLANNEL_MTU=1450\nFLANNEL_IPMASQ=true\n"
		Expect(os.WriteFile(from, []byte(flanneld), 0o644)).To(Succeed())
		Eventually(func() ([]byte, error) { return os.ReadFile(kept) }).Should(BeEquivalentTo(flanneld))
		info, err := os.Stat(filepath.Dir(kept))
		Expect(err).NotTo(HaveOccurred())
		Expect(info.Mode().Perm()).To(Equal(os.FileMode(0o755)))
		out, err = ctl("stop")
		Expect(err).NotTo(HaveOccurred(), out)

		// the reboot: /run and /var/vcap/sys/run are tmpfs
		for _, gone := range []string{filepath.Dir(to), filepath.Dir(from), filepath.Dir(pidfile)} {
			Expect(os.RemoveAll(gone)).To(Succeed())
		}
		out, err = ctl("start")
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(os.ReadFile(to)).To(BeEquivalentTo(flanneld))
	})

	It("starts the publisher once, in a session of its own, and stops it, leaving the copy", func() {
		out, err := ctl("start")
		Expect(err).NotTo(HaveOccurred(), out)
		pid := pidInFile()
		Expect(runs(pid)).To(BeTrue())
		sid, err := unix.Getsid(pid)
		Expect(err).NotTo(HaveOccurred())
		Expect(sid).To(Equal(pid))
		Expect(filepath.Join(dir, "log", "subnet-publisher.log")).To(BeAnExistingFile())

		out, err = ctl("start")
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(pidInFile()).To(Equal(pid))
		Expect(publishers()).To(Equal(1))

		Expect(os.Mkdir(filepath.Dir(to), 0o755)).To(Succeed())
		Expect(os.WriteFile(to, nil, 0o644)).To(Succeed()) // stands for the copy
		out, err = ctl("stop")
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(runs(pid)).To(BeFalse())
		Expect(pidfile).NotTo(BeAnExistingFile())
		Expect(to).To(BeAnExistingFile())
	})

	It("stops nothing but the publisher that the pidfile names", func() {
		sleeper := exec.Command("sleep", "60")
		Expect(sleeper.Start()).To(Succeed())
		DeferCleanup(func() { _ = sleeper.Process.Kill(); _ = sleeper.Wait() })
		Expect(os.MkdirAll(filepath.Dir(pidfile), 0o755)).To(Succeed())
		Expect(os.WriteFile(pidfile, []byte(strconv.Itoa(sleeper.Process.Pid)+"\n"), 0o644)).To(Succeed())
		out, err := ctl("stop")
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(sleeper.Process.Signal(syscall.Signal(0))).To(Succeed(), "still running")
		Expect(pidfile).NotTo(BeAnExistingFile())

		Expect(os.WriteFile(pidfile, []byte(strconv.Itoa(sleeper.Process.Pid)+"\n"), 0o644)).To(Succeed())
		out, err = ctl("start")
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(runs(pidInFile())).To(BeTrue(), "a publisher started, the sleeper did not count as one")
	})

	It("fails its start, naming the log, when the publisher does not run", func() {
		script = strings.ReplaceAll(script, to, filepath.Join(filepath.Dir(from), "copy.env"))
		out, err := ctl("start")
		Expect(err).To(HaveOccurred())
		Expect(out).To(ContainSubstring("subnet-publisher did not start; see " + filepath.Join(dir, "log", "subnet-publisher.log")))
		log, err := os.ReadFile(filepath.Join(dir, "log", "subnet-publisher.log"))
		Expect(err).NotTo(HaveOccurred())
		Expect(string(log)).To(ContainSubstring("are in the same directory"))
	})

	// On a stemcell any local user can make entries in the run directory, before the first deploy and after
	// every reboot. Each plant is nobody's (vcap here); what it returns must stay as it was.
	DescribeTable("writes its pidfile through no link that another user left in the run directory",
		func(plant func(runDir string) (untouched string)) {
			untouched := plant(filepath.Dir(pidfile))
			before := snapshot(untouched)
			out, err := ctl("start")
			Expect(err).NotTo(HaveOccurred(), out)
			Expect(snapshot(untouched)).To(Equal(before), untouched)
			expectOwned(filepath.Dir(filepath.Dir(pidfile)), filepath.Base(filepath.Dir(pidfile)), os.ModeDir|0o755, 0, 0)
			Expect(runs(pidInFile())).To(BeTrue())
			Expect(publishers()).To(Equal(1))
		},
		Entry("its pidfile, a link to a file of root's, in a directory of nobody's", func(runDir string) string {
			plantDirs(filepath.Dir(runDir), filepath.Base(runDir))
			return plantLink(runDir, filepath.Base(pidfile), rootsFile(dir, "shadow"))
		}),
		Entry("its run directory, a link to a directory of root's", func(runDir string) string {
			target := filepath.Join(dir, "elsewhere")
			Expect(os.Mkdir(target, 0o755)).To(Succeed())
			return plantLink(filepath.Dir(runDir), filepath.Base(runDir), target)
		}),
	)

	// 2018's agent makes the run directory a tmpfs of 1 MiB, which every job on the VM shares.
	It("starts no publisher when it cannot write its pidfile, however often monit tries", func() {
		run := filepath.Dir(filepath.Dir(pidfile))
		Expect(unix.Mount("tmpfs", run, "tmpfs", 0, "size=4k,mode=1777")).To(Succeed())
		DeferCleanup(func() { Expect(unix.Unmount(run, unix.MNT_DETACH)).To(Succeed()) })
		Expect(os.Mkdir(filepath.Dir(pidfile), 0o755)).To(Succeed())
		Expect(os.WriteFile(filepath.Join(run, "other-job.log"), make([]byte, 4096), 0o644)).To(Succeed())
		for range 3 {
			out, err := ctl("start")
			Expect(err).To(HaveOccurred(), out)
			Expect(out).To(ContainSubstring("subnet-publisher did not start"))
		}
		Expect(publishers()).To(BeZero())
		log, err := os.ReadFile(filepath.Join(dir, "log", "subnet-publisher.log"))
		Expect(err).NotTo(HaveOccurred())
		Expect(string(log)).To(ContainSubstring("Cannot write the pidfile " + pidfile + ": the publisher is not started"))
		Expect(os.ReadDir(filepath.Dir(pidfile))).To(BeEmpty(), "no pidfile.new is left")
	})

	It("says how to call it", func() {
		out, err := ctl("restart")
		Expect(err).To(MatchError(ContainSubstring("exit status 2")))
		Expect(out).To(ContainSubstring("usage: subnet-publisher start|stop"))
	})
})
