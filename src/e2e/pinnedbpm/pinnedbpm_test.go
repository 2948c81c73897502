package pinnedbpm_test

import (
	"github.com/flannel-dns/flannel-dns/src/testenv/cache"

	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"

	"github.com/flannel-dns/flannel-dns/src/e2e/network"
	"github.com/flannel-dns/flannel-dns/src/e2e/stemcell"
	"github.com/flannel-dns/flannel-dns/src/e2e/vm"
)

// pins are the bpm of kubo-deployment v0.21 and v0.32 with the runc each shipped (scripts/build-pinned-runc).
var pins = []struct{ bpm, runc string }{{"0.12.2", "1.0.0-rc5"}, {"1.0.4", "1.0.0-rc8"}}

const (
	bpmBin   = "/var/vcap/packages/bpm/bin/bpm"
	runcBin  = "/var/vcap/packages/bpm/bin/runc"
	runcRoot = "/var/vcap/data/bpm/runc"
	probeBin = "/var/vcap/packages/probe/bin/probe"
	// NET_ADMIN (12) and NET_RAW (13) as /proc/<pid>/status shows a capability set.
	netAdminNetRaw = "0000000000003000"
	capSysResource = 24
	// errno 1: what bpm's seccomp profile answers for a system call it does not allow.
	eperm = "1"
	// errnos 38 and 97: a kernel without the call; a kernel booted with ipv6.disable=1, for socket(AF_INET6).
	enosys       = "38"
	eafnosupport = "97"
	// errnos 95 and 99: a kernel without SOCK_DESTROY; RTM_DELADDR of an address the link does not have.
	eopnotsupp    = "95"
	eaddrnotavail = "99"
)

var (
	cacheDir string
	probe    string
	boot     string
	vcap     *user.User
	vms      *network.Network
)

var _ = BeforeSuite(func() {
	cacheDir = cache.Dir()
	var missing []string
	for _, pin := range pins {
		if _, err := os.Stat(filepath.Join(cacheDir, "bpm-"+pin.bpm, "compiled/bpm/bin/bpm")); err != nil {
			missing = append(missing, "bpm "+pin.bpm+" (scripts/build-pinned-releases)")
		}
	}
	var err error
	if vcap, err = user.Lookup("vcap"); err != nil {
		missing = append(missing, "the vcap user (src/e2e/prepare.sh)")
	}
	if len(missing) > 0 {
		Expect(os.Getenv("E2E_REQUIRED")).To(BeEmpty(), "missing: %s", strings.Join(missing, ", "))
		Skip("missing: " + strings.Join(missing, ", "))
	}
	Expect(network.SweepLeftovers()).To(Succeed())
	Expect(vm.SweepLeftovers()).To(Succeed())
	boot, err = gexec.Build("github.com/flannel-dns/flannel-dns/src/e2e/cmd/vmboot")
	Expect(err).NotTo(HaveOccurred())
	probe, err = gexec.BuildWithEnvironment("github.com/flannel-dns/flannel-dns/src/e2e/pinnedbpm/testdata/probe",
		[]string{"CGO_ENABLED=0"})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(gexec.CleanupBuildArtifacts)
	vms, err = network.New(network.Prefix(), netip.MustParsePrefix("192.0.2.1/24"))
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { Expect(vms.Destroy()).To(Succeed()) })
})

var _ = Describe("the bpm that kubo-deployment pins, with the runc it shipped", func() {
	for i, pin := range pins {
		Context("bpm "+pin.bpm, Ordered, func() {
			var m *machine
			BeforeAll(func() { m = newMachine(pin.bpm, netip.AddrFrom4([4]byte{192, 0, 2, byte(10 + i)}), stemcell.Kernel{}) })

			It("has runc "+pin.runc+" beside it", func() {
				out, err := m.Run(runcBin, "--version")
				Expect(err).NotTo(HaveOccurred())
				Expect(out).To(HavePrefix("runc version " + pin.runc + "\n"))
			})

			It("boots as xenial's kernel: no IPv6 socket, no pidfd_getfd (4.15 lacks it), the stemcell's sysctls", func() {
				out, err := m.Run(probeBin, "-once")
				Expect(err).NotTo(HaveOccurred())
				report := parseReport(out)
				Expect(report).To(HaveKeyWithValue("socket_inet6", eafnosupport))
				Expect(report).To(HaveKeyWithValue("pidfd_getfd", enosys))
				Expect(report).To(HaveKeyWithValue("sock_destroy", "0"))
				Expect(report).To(HaveKeyWithValue("tcp_keepalive_time", "120"))
				Expect(m.Run("sysctl", "-n", "net.ipv4.conf.all.rp_filter", "net.ipv4.tcp_keepalive_probes")).To(Equal("1\n8\n"))
			})

			It("runs a job like flanneld's as vcap with NET_ADMIN and NET_RAW only, and refuses it pidfd_getfd", func() {
				report := m.cycle("flanneld")
				Expect(report).To(HaveKeyWithValue("uid", vcap.Uid))
				Expect(report).To(HaveKeyWithValue("gid", vcap.Gid))
				Expect(report).To(HaveKeyWithValue("CapEff", netAdminNetRaw))
				Expect(report).To(HaveKeyWithValue("NoNewPrivs", "1"))
				Expect(report).To(HaveKeyWithValue("Seccomp", "2"))
				Expect(report).To(HaveKeyWithValue("pidfd_getfd", eperm))
				Expect(report).To(HaveKeyWithValue("socket_inet6", eafnosupport))
				Expect(report).To(HaveKeyWithValue("sock_destroy", "0"))
				Expect(report).To(HaveKeyWithValue("tcp_keepalive_time", "120"))
				Expect(report).To(HaveKeyWithValue("write:/var/vcap/data/flanneld", "ok"))
				Expect(report).To(HaveKeyWithValue("write:/var/vcap/sys/run/flanneld", "ok"))
				Expect(report).To(HaveKeyWithValue("write:/run/flannel", ContainSubstring("read-only file system")))
			})

			It("runs a job like cfcr-etcd's with its persistent disk, at the open-file limit this machine allows", func() {
				report := m.cycle("etcd-at-limit")
				Expect(report).To(HaveKeyWithValue("uid", vcap.Uid))
				Expect(report).To(HaveKeyWithValue("CapEff", "0000000000000000"))
				Expect(report).To(HaveKeyWithValue("pidfd_getfd", eperm))
				Expect(report).To(HaveKeyWithValue("nofile", strconv.FormatUint(hardNofile(), 10)))
				Expect(report).To(HaveKeyWithValue("write:/var/vcap/store/etcd-at-limit", "ok"))
			})

			It("runs cfcr-etcd's 100000 open files only where root may raise the hard limit", func() {
				if canRaiseLimits() {
					Expect(m.cycle("etcd")).To(HaveKeyWithValue("nofile", "100000"))
					return
				}
				_, err := m.Run(bpmBin, "start", "etcd")
				Expect(err).To(HaveOccurred())
				Expect(m.log("etcd", "stderr")).To(ContainSubstring("error setting rlimit type 7: operation not permitted"))
				Expect(m.listed()).To(HaveKeyWithValue("etcd", "stopped"))
				Expect(m.Run(runcBin, "--root", runcRoot, "list", "-q")).To(BeEmpty())
			})
		})
	}
})

// trusty's 4.4 has no SOCK_DESTROY, nor does a kernel built without CONFIG_INET_DIAG_DESTROY.
var _ = Describe("a VM whose kernel destroys no socket", Ordered, func() {
	var m *machine
	BeforeAll(func() {
		m = newMachine(pins[1].bpm, netip.MustParseAddr("192.0.2.20"), stemcell.Kernel{Major: 4, Minor: 4})
	})

	It("refuses SOCK_DESTROY on sock_diag with EOPNOTSUPP, in bpm's containers too, and nothing else", func() {
		once, err := m.Run(probeBin, "-once")
		Expect(err).NotTo(HaveOccurred())
		for _, report := range []map[string]string{parseReport(once), m.cycle("flanneld")} {
			Expect(report).To(HaveKeyWithValue("sock_destroy", eopnotsupp))
			Expect(report).To(HaveKeyWithValue("rtm_deladdr", eaddrnotavail))
			Expect(report).To(HaveKeyWithValue("pidfd_getfd", Or(Equal(enosys), Equal(eperm))))
			Expect(report).To(HaveKeyWithValue("socket_inet6", eafnosupport))
		}
	})
})

// machine is a simulated VM with one pinned bpm, the probe as a package, and the jobs' bpm.yml.
type machine struct{ *vm.VM }

// newMachine boots xenial 97.x's profile, on kernel if it is set.
func newMachine(version string, addr netip.Addr, kernel stemcell.Kernel) *machine {
	name := "bpm-" + strings.ReplaceAll(version, ".", "-")
	if kernel != (stemcell.Kernel{}) {
		name += "-k" + strings.ReplaceAll(kernel.String(), ".", "-")
	}
	host, err := vms.AddHost(name, addr)
	Expect(err).NotTo(HaveOccurred())
	line, err := stemcell.Load(cacheDir, "ubuntu-xenial-97.x")
	Expect(err).NotTo(HaveOccurred())
	if kernel != (stemcell.Kernel{}) {
		line.Kernel = kernel
	}
	v, err := vm.New(host, GinkgoT().TempDir(), line, boot)
	Expect(err).NotTo(HaveOccurred())
	m := &machine{v}
	DeferCleanup(func() { Expect(m.Destroy()).To(Succeed()) })
	install(filepath.Join(cacheDir, "bpm-"+version, "compiled/bpm"), m.Path("/var/vcap/packages/bpm"))
	install(probe, m.Path(probeBin))
	Expect(os.MkdirAll(m.Path("/var/vcap/store"), 0o755)).To(Succeed())
	// flanneld's bin/start prepares its unrestricted volumes; bpm only mounts them: flanneld's own directory
	// and the iptables lock for vcap, /run/flannel (where the subnet file is published) root's alone.
	Expect(os.Mkdir(m.Path("/run/flannel"), 0o755)).To(Succeed())
	Expect(os.MkdirAll(m.Path("/var/vcap/sys/run/flanneld"), 0o750)).To(Succeed())
	Expect(os.WriteFile(m.Path("/run/xtables.lock"), nil, 0o600)).To(Succeed())
	uid, _ := strconv.Atoi(vcap.Uid)
	gid, _ := strconv.Atoi(vcap.Gid)
	for _, p := range []string{"/var/vcap/sys/run/flanneld", "/run/xtables.lock"} {
		Expect(os.Chown(m.Path(p), uid, gid)).To(Succeed())
	}
	for job, config := range jobs() {
		dir := m.Path("/var/vcap/jobs/" + job + "/config")
		Expect(os.MkdirAll(dir, 0o755)).To(Succeed())
		Expect(os.WriteFile(filepath.Join(dir, "bpm.yml"), []byte(config), 0o644)).To(Succeed())
		DeferCleanup(func() { _, _ = m.Run(bpmBin, "stop", job) }) // runc deletes the container and its cgroups
	}
	return m
}

// jobs are bpm.yml files shaped like the flanneld job's (capabilities, an ephemeral disk, unrestricted volumes
// mounted only) and cfcr-etcd's (a persistent disk, 100000 open files), each running the probe.
func jobs() map[string]string {
	return map[string]string{
		"flanneld": `processes:
- name: flanneld
  executable: ` + probeBin + `
  args: [/var/vcap/data/flanneld, /var/vcap/sys/run/flanneld, /run/flannel]
  ephemeral_disk: true
  capabilities: [NET_ADMIN, NET_RAW]
  unsafe:
    unrestricted_volumes:
    - {path: /var/vcap/sys/run/flanneld, writable: true, mount_only: true}
    - {path: /run/flannel, mount_only: true}
    - {path: /run/xtables.lock, writable: true, mount_only: true}
`,
		"etcd":          etcdJob("etcd", 100000),
		"etcd-at-limit": etcdJob("etcd-at-limit", hardNofile()),
	}
}

func etcdJob(name string, openFiles uint64) string {
	return fmt.Sprintf(`processes:
- name: %s
  executable: %s
  args: [/var/vcap/store/%s]
  persistent_disk: true
  limits:
    open_files: %d
`, name, probeBin, name, openFiles)
}

func install(src, dst string) {
	Expect(os.MkdirAll(filepath.Dir(dst), 0o755)).To(Succeed())
	out, err := exec.Command("cp", "-a", src, dst).CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), string(out))
}

// cycle starts job with bpm, sees bpm list it running in cgroups of its own, stops it and checks that nothing of
// it is left: no process, no container, no cgroup. It returns what the job's probe reported.
func (m *machine) cycle(job string) map[string]string {
	_, err := m.Run(bpmBin, "start", job)
	Expect(err).NotTo(HaveOccurred())
	report := m.report(job)
	Expect(m.listed()).To(HaveKeyWithValue(job, "running"))
	pid := m.pid(job)
	cgroups := containerCgroups(pid)
	Expect(cgroups).NotTo(BeEmpty())
	for _, dir := range cgroups {
		Expect(m.isDir(dir)).To(BeTrue(), "runc's cgroup %s on the VM", dir)
	}

	_, err = m.Run(bpmBin, "stop", job)
	Expect(err).NotTo(HaveOccurred())
	Expect(m.listed()).To(HaveKeyWithValue(job, "stopped"))
	Expect(m.log(job, "stdout")).To(HaveSuffix("stopping\n"))
	Eventually(func() bool { return alive(pid) }).WithTimeout(10 * time.Second).Should(BeFalse())
	Expect(m.Run(runcBin, "--root", runcRoot, "list", "-q")).To(BeEmpty())
	for _, dir := range cgroups {
		Expect(m.isDir(dir)).To(BeFalse(), "runc's cgroup %s on the VM", dir)
	}
	return report
}

// report waits for job's probe to be ready and returns its report, by key.
func (m *machine) report(job string) map[string]string {
	Eventually(func() string { return m.log(job, "stdout") }).WithTimeout(10*time.Second).
		Should(ContainSubstring("ready\n"), "stderr: %s", m.log(job, "stderr"))
	return parseReport(m.log(job, "stdout"))
}

func parseReport(out string) map[string]string {
	report := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if key, value, ok := strings.Cut(line, " "); ok {
			report[key] = value
		}
	}
	return report
}

func (m *machine) log(job, stream string) string {
	data, _ := os.ReadFile(m.Path(fmt.Sprintf("/var/vcap/sys/log/%s/%s.%s.log", job, job, stream)))
	return string(data)
}

// listed is the status `bpm list` gives each job.
func (m *machine) listed() map[string]string {
	out, err := m.Run(bpmBin, "list")
	Expect(err).NotTo(HaveOccurred())
	status := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if fields := strings.Fields(line); len(fields) == 3 {
			status[fields[0]] = fields[2]
		}
	}
	return status
}

func (m *machine) pid(job string) int {
	data, err := os.ReadFile(m.Path(fmt.Sprintf("/var/vcap/sys/run/bpm/%s/%s.pid", job, job)))
	Expect(err).NotTo(HaveOccurred())
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	Expect(err).NotTo(HaveOccurred())
	return pid
}

// isDir tells whether dir is a directory in the VM's view, where bpm mounts the v1 controllers the host lacks.
func (m *machine) isDir(dir string) bool {
	_, err := m.Run("test", "-d", dir)
	return err == nil
}

// containerCgroups are the cgroup v1 directories that pid is in below a hierarchy's root: runc's for its
// container (these runc know no cgroup v2, so the VM's v2 cgroup is left out).
func containerCgroups(pid int) []string {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	Expect(err).NotTo(HaveOccurred())
	var dirs []string
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) == 3 && parts[1] != "" && parts[2] != "/" {
			dirs = append(dirs, filepath.Join("/sys/fs/cgroup", strings.TrimPrefix(parts[1], "name="), parts[2]))
		}
	}
	return dirs
}

// alive tells whether pid is a process that has not exited (a zombie has).
func alive(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(data), ") ")
	return !strings.HasPrefix(rest, "Z")
}

func hardNofile() uint64 {
	var limit syscall.Rlimit
	Expect(syscall.Getrlimit(syscall.RLIMIT_NOFILE, &limit)).To(Succeed())
	return limit.Max
}

// canRaiseLimits tells whether root here holds CAP_SYS_RESOURCE, which runc needs to raise a hard limit.
func canRaiseLimits() bool {
	status, err := os.ReadFile("/proc/self/status")
	Expect(err).NotTo(HaveOccurred())
	for _, line := range strings.Split(string(status), "\n") {
		if value, ok := strings.CutPrefix(line, "CapEff:"); ok {
			caps, err := strconv.ParseUint(strings.TrimSpace(value), 16, 64)
			Expect(err).NotTo(HaveOccurred())
			return caps&(1<<capSysResource) != 0
		}
	}
	Fail("no CapEff in /proc/self/status")
	return false
}
