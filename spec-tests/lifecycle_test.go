package spectests_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/flannel-dns/flannel-dns/src/e2e/monit"
	"github.com/flannel-dns/flannel-dns/src/jobrender"
)

// statusFile is where the job's bpm.yml tells the launcher to keep its status.
const statusFile = "/var/vcap/data/flanneld/status.json"

var _ = Describe("flanneld's lifecycle under bpm", func() {
	var rendered jobrender.Rendered

	BeforeEach(func() {
		var err error
		rendered, err = renderer.Render(flanneld, withTLS(nil), worker(0))
		Expect(err).NotTo(HaveOccurred())
	})

	Describe("monit", func() {
		var procs []monit.Process

		BeforeEach(func() {
			var err error
			procs, err = monit.Parse(rendered.Files[jobrender.MonitPath])
			Expect(err).NotTo(HaveOccurred())
			Expect(procs).To(HaveLen(2))
		})

		It("watches bpm's pidfile of the process, starts through bin/start and stops through bpm", func() {
			bpm, err := checkBPM(rendered.Files["config/bpm.yml"])
			Expect(err).NotTo(HaveOccurred())
			process := bpm.Process.Name
			Expect(procs[0]).To(Equal(monit.Process{Name: flanneld.Name,
				PIDFile: "/var/vcap/sys/run/bpm/" + flanneld.Name + "/" + process + ".pid",
				Start:   []string{"/var/vcap/jobs/flanneld/bin/start"},
				Stop:    []string{"/var/vcap/jobs/bpm/bin/bpm", "stop", process}}))
			Expect(rendered.Files).To(HaveKey("bin/start"))
		})

		It("runs subnet-publisher through bin/subnet-publisher, as root outside bpm, and watches the pidfile it writes", func() {
			Expect(procs[1]).To(Equal(monit.Process{Name: "flanneld-subnet-publisher",
				PIDFile: "/var/vcap/sys/run/flanneld-subnet-publisher/subnet-publisher.pid",
				Start:   []string{"/var/vcap/jobs/flanneld/bin/subnet-publisher", "start"},
				Stop:    []string{"/var/vcap/jobs/flanneld/bin/subnet-publisher", "stop"}}))
			script := string(rendered.Files["bin/subnet-publisher"])
			Expect(script).To(ContainSubstring("\nrun_dir=" + filepath.Dir(procs[1].PIDFile) + "\n"))
			Expect(script).To(ContainSubstring("\npidfile=$run_dir/" + filepath.Base(procs[1].PIDFile) + "\n"))
		})
	})

	Describe("bin/start", func() {
		var script string

		BeforeEach(func() {
			script = string(rendered.Files["bin/start"])
			expectBashSyntax(script)
		})

		It("prepares every unrestricted path that bpm mounts, as bpm drops or refuses a missing one: vcap's to write, root's to read", func() {
			bpm, err := checkBPM(rendered.Files["config/bpm.yml"])
			Expect(err).NotTo(HaveOccurred())
			volumes := bpm.Process.Unsafe.UnrestrictedVolumes
			Expect(volumes).NotTo(BeEmpty())
			stat := regexp.MustCompile(`(?m)^stat_paths (.*\\\n)*.*\n`).FindString(script)
			Expect(stat).NotTo(BeEmpty())
			for _, volume := range volumes {
				prepare := `make_dir %s root:root 0755`
				if volume.Writable {
					prepare = `(make_dir %s "\$job_user:\$job_group" 0750|  touch %s)`
				}
				path := regexp.QuoteMeta(volume.Path)
				Expect(script).To(MatchRegexp(`(?m)^` + strings.ReplaceAll(prepare, "%s", path) + `$`))
				Expect(strings.Fields(strings.ReplaceAll(stat, "\\\n", " "))).To(ContainElement(volume.Path))
			}
		})

		// prepare runs the script's lines that prepare the paths bpm mounts and bpm's own directories, as root
		// under `set -euo pipefail`, on paths under root instead, for nobody:nogroup instead of vcap, with the
		// job's lib/run-dirs.sh; it returns their output and the commands they ran.
		prepare := func(root string) (string, error, []string) {
			block := regexp.MustCompile(`(?ms)^source /var/vcap/jobs/flanneld/lib/run-dirs.sh\n.*?^make_dir /var/vcap/sys/run/bpm-runc root:root 0700\n`).FindString(script)
			Expect(block).NotTo(BeEmpty())
			block = withRunDirsLib(rendered, block)
			block = strings.Replace(block, "job_user=vcap job_group=vcap", "job_user=nobody job_group=nogroup", 1)
			block = regexp.MustCompile(`/var/vcap/sys/run\b|/run/flannel\b|/run/xtables\.lock`).ReplaceAllString(block, root+"$0")
			// Every command the block runs is logged: bash's builtins are not.
			bin := GinkgoT().TempDir()
			for _, command := range []string{"stat", "mkdir", "rm", "chown", "touch", "chgrp", "chmod"} {
				wrapper := fmt.Sprintf("#!/bin/sh\necho %s >>%s/ran\nexec /usr/bin/%s \"$@\"\n", command, bin, command)
				Expect(os.WriteFile(filepath.Join(bin, command), []byte(wrapper), 0o755)).To(Succeed())
			}
			cmd := exec.Command("bash", "-c", "set -euo pipefail\n"+block)
			cmd.Env = append(os.Environ(), "PATH="+bin+":/usr/bin:/bin")
			out, err := cmd.CombinedOutput()
			ran, readErr := os.ReadFile(filepath.Join(bin, "ran"))
			if readErr != nil && !os.IsNotExist(readErr) {
				Expect(readErr).NotTo(HaveOccurred())
			}
			return string(out), err, strings.Fields(string(ran))
		}
		preparePaths := func(root string) []string {
			out, err, ran := prepare(root)
			Expect(err).NotTo(HaveOccurred(), out)
			return ran
		}
		// stemcellRoot is a temporary root with /run and /var/vcap/sys/run as a stemcell has them: the second
		// is the agent's tmpfs, mode 1777, root:vcap (nogroup here).
		stemcellRoot := func() (root, run string) {
			root = GinkgoT().TempDir()
			run = filepath.Join(root, "var/vcap/sys/run")
			Expect(os.MkdirAll(run, 0o755)).To(Succeed())
			Expect(os.Chmod(run, os.ModeSticky|0o777)).To(Succeed())
			Expect(os.Chown(run, 0, 65534)).To(Succeed())
			Expect(os.MkdirAll(filepath.Join(root, "run"), 0o755)).To(Succeed())
			return root, run
		}

		It("makes each path bpm mounts what flanneld needs, and bpm's own directories root's alone, then on the next start runs nothing but one stat", func() {
			root, _ := stemcellRoot()
			Expect(preparePaths(root)).To(ContainElements("mkdir", "chown", "touch", "chgrp", "chmod"))
			expectOwned(root, "var/vcap/sys/run/flanneld", os.ModeDir|0o750, 65534, 65534)
			expectOwned(root, "run/flannel", os.ModeDir|0o755, 0, 0)
			expectOwned(root, "run/xtables.lock", 0o660, 0, 65534)
			for _, bpmDir := range []string{"bpm", "bpm/flanneld", "bpm-runc"} {
				expectOwned(root, "var/vcap/sys/run/"+bpmDir, os.ModeDir|0o700, 0, 0)
			}
			Expect(preparePaths(root)).To(Equal([]string{"stat"}))

			// iptables writes nothing into its lock, but someone else may have: a lock with content is kept.
			Expect(os.WriteFile(filepath.Join(root, "run/xtables.lock"), []byte("x"), 0o660)).To(Succeed())
			Expect(preparePaths(root)).To(Equal([]string{"stat"}))
		})

		It("puts back each path's owner and mode when something changed them", func() {
			root, _ := stemcellRoot()
			Expect(os.MkdirAll(filepath.Join(root, "var/vcap/sys/run/flanneld"), 0o777)).To(Succeed())
			Expect(os.WriteFile(filepath.Join(root, "run/xtables.lock"), nil, 0o644)).To(Succeed())
			Expect(os.Symlink(root, filepath.Join(root, "run/flannel"))).To(Succeed())
			Expect(os.MkdirAll(filepath.Join(root, "var/vcap/sys/run/bpm"), 0o755)).To(Succeed())
			preparePaths(root)
			expectOwned(root, "var/vcap/sys/run/flanneld", os.ModeDir|0o750, 65534, 65534)
			expectOwned(root, "run/xtables.lock", 0o660, 0, 65534)
			expectOwned(root, "run/flannel", os.ModeDir|0o755, 0, 0)
			expectOwned(root, "var/vcap/sys/run/bpm", os.ModeDir|0o700, 0, 0)
		})

		// takeBack runs the lines that prepare the paths under a root whose /run/flannel is dir, and checks that
		// it is root's alone afterwards.
		takeBack := func(root string) {
			preparePaths(root)
			expectOwned(root, "run/flannel", os.ModeDir|0o755, 0, 0)
		}

		// An older release gave /run/flannel to vcap, who could leave anything there for docker's job to source.
		DescribeTable("takes /run/flannel back whole from anyone but root, whatever it holds, and touches nothing it leads to",
			func(plant func(dir string) (kept string)) {
				root, _ := stemcellRoot()
				dir := filepath.Join(root, "run/flannel")
				kept := plant(dir)
				takeBack(root)
				Expect(os.ReadDir(dir)).To(BeEmpty())
				if kept != "" {
					Expect(kept).To(BeAnExistingFile())
				}
			},
			Entry("nothing", func(dir string) string { return "" }),
			Entry("vcap's directory, with a subnet file and a link in it", func(dir string) string {
				Expect(os.Mkdir(dir, 0o755)).To(Succeed())
				Expect(os.WriteFile(filepath.Join(dir, "subnet.env"), []byte("FLANNEL_MTU=$(id)\n"), 0o644)).To(Succeed())
				precious := filepath.Join(filepath.Dir(dir), "precious")
				Expect(os.WriteFile(precious, nil, 0o600)).To(Succeed())
				Expect(os.Symlink(precious, filepath.Join(dir, "link"))).To(Succeed())
				Expect(exec.Command("chown", "-R", "-h", "65534:65534", dir).Run()).To(Succeed())
				return precious
			}),
			Entry("root's directory that others may write", func(dir string) string {
				Expect(os.Mkdir(dir, 0o777)).To(Succeed())
				Expect(os.Chmod(dir, 0o777)).To(Succeed())
				Expect(os.WriteFile(filepath.Join(dir, "subnet.env"), nil, 0o644)).To(Succeed())
				return ""
			}),
			Entry("a link to root's directory", func(dir string) string {
				target := filepath.Join(filepath.Dir(dir), "elsewhere")
				Expect(os.Mkdir(target, 0o755)).To(Succeed())
				Expect(os.WriteFile(filepath.Join(target, "precious"), nil, 0o600)).To(Succeed())
				Expect(os.Symlink(target, dir)).To(Succeed())
				return filepath.Join(target, "precious")
			}),
			Entry("a file", func(dir string) string {
				Expect(os.WriteFile(dir, nil, 0o644)).To(Succeed())
				return ""
			}),
		)

		It("keeps root's /run/flannel and the copy in it, which docker's job reads when it stops too", func() {
			root, _ := stemcellRoot()
			dir := filepath.Join(root, "run/flannel")
			Expect(os.Mkdir(dir, 0o755)).To(Succeed())
			Expect(os.Chmod(dir, 0o755)).To(Succeed())
			Expect(os.WriteFile(filepath.Join(dir, "subnet.env"), nil, 0o644)).To(Succeed())
			takeBack(root)
			Expect(filepath.Join(dir, "subnet.env")).To(BeAnExistingFile())
		})

		// kernel runs the script's lines that set up the kernel, on files under root instead of /proc/sys, with a
		// modprobe that fails.
		kernel := func(root string) (string, error) {
			block := regexp.MustCompile(`(?ms)^set_kernel\(\) \{\n.*?^set_kernel /proc/sys/net/ipv4/ip_forward 1\n`).FindString(script)
			Expect(block).To(ContainSubstring("modprobe br_netfilter ||"))
			block = strings.ReplaceAll(block, "/proc/sys/", root+"/")
			out, err := exec.Command("bash", "-c", "set -euo pipefail\nmodprobe() { return 1; }\n"+block).CombinedOutput()
			return string(out), err
		}

		It("sets up the kernel for pod traffic, as pre-start used to", func() {
			root := GinkgoT().TempDir()
			for _, setting := range []string{"net/bridge/bridge-nf-call-iptables", "net/ipv4/ip_forward"} {
				Expect(os.MkdirAll(filepath.Dir(filepath.Join(root, setting)), 0o755)).To(Succeed())
				Expect(os.WriteFile(filepath.Join(root, setting), []byte("0\n"), 0o644)).To(Succeed())
			}
			out, err := kernel(root)
			Expect(err).NotTo(HaveOccurred(), out)
			Expect(os.ReadFile(filepath.Join(root, "net/bridge/bridge-nf-call-iptables"))).To(Equal([]byte("1\n")))
			Expect(os.ReadFile(filepath.Join(root, "net/ipv4/ip_forward"))).To(Equal([]byte("1\n")))
			Expect(out).To(BeEmpty())
		})

		It("goes on without bridge-nf-call-iptables when br_netfilter cannot be loaded, and says so", func() {
			root := GinkgoT().TempDir()
			Expect(os.MkdirAll(filepath.Join(root, "net/ipv4"), 0o755)).To(Succeed())
			Expect(os.WriteFile(filepath.Join(root, "net/ipv4/ip_forward"), []byte("0\n"), 0o644)).To(Succeed())
			out, err := kernel(root)
			Expect(err).NotTo(HaveOccurred(), out)
			Expect(out).To(ContainSubstring("br_netfilter not loaded"))
			Expect(os.ReadFile(filepath.Join(root, "net/ipv4/ip_forward"))).To(Equal([]byte("1\n")))
		})

		It("calls bpm only to start flanneld: a Go program's start delays the start", func() {
			Expect(strings.Count(script, "/var/vcap/jobs/bpm/bin/bpm ")).To(Equal(1))
		})

		It("hands over to bpm", func() {
			Expect(script).To(HaveSuffix("\nexec /var/vcap/jobs/bpm/bin/bpm start flanneld\n"))
		})

		// bpmPidfile is where bpm keeps flanneld's PID, which monit watches.
		const bpmPidfile = "/var/vcap/sys/run/bpm/flanneld/flanneld.pid"

		// whetherRuns is the script's lines that tell from bpm's pidfile whether flanneld runs, which the blocks
		// below rely on.
		whetherRuns := func() string {
			block := regexp.MustCompile(`(?ms)^bpm_pidfile=.*?^if \[\[ \$pid .*?^fi\n`).FindString(script)
			Expect(block).To(HavePrefix("bpm_pidfile=" + bpmPidfile + "\n"))
			return block
		}

		// runsBlock runs whetherRuns and then block, as root under `set -euo pipefail`, with bpm's pidfile at
		// pidfile, which names a live process if flanneldRuns, and the status file at status.
		runsBlock := func(block, pidfile, status string, flanneldRuns bool) (string, error) {
			if flanneldRuns {
				Expect(os.MkdirAll(filepath.Dir(pidfile), 0o755)).To(Succeed())
				Expect(os.WriteFile(pidfile, []byte(fmt.Sprintf("%d\n", os.Getpid())), 0o644)).To(Succeed())
			}
			block = strings.ReplaceAll(whetherRuns()+block, bpmPidfile, pidfile)
			out, err := exec.Command("bash", "-c", "set -euo pipefail\n"+strings.ReplaceAll(block, statusFile, status)).CombinedOutput()
			return string(out), err
		}

		DescribeTable("flanneld runs only if bpm's pidfile names a live process",
			func(content []byte, runs bool) {
				pidfile := filepath.Join(GinkgoT().TempDir(), "flanneld.pid")
				if content != nil {
					Expect(os.WriteFile(pidfile, content, 0o644)).To(Succeed())
				}
				out, err := runsBlock(`echo "running=$running"`, pidfile, statusFile, false)
				Expect(err).NotTo(HaveOccurred(), out)
				Expect(out).To(Equal(fmt.Sprintf("running=%t\n", runs)))
			},
			Entry("no pidfile", nil, false),
			Entry("an empty pidfile (left by an earlier start)", []byte{}, false),
			Entry("a live process", []byte(fmt.Sprintf("%d\n", os.Getpid())), true),
			Entry("a dead process", []byte(fmt.Sprintf("%d\n", deadPID())), false),
			Entry("no number", []byte("$(id)\n"), false),
			Entry("PID 0, which kill takes for its own group", []byte("0\n"), false),
		)

		// clearStatus runs the script's lines that clear an earlier run's status, as root under `set -euo
		// pipefail`, with a bpm that says whether flanneld runs and the status file moved into a temporary
		// directory (the rest of the script changes the host).
		clearStatus := func(status string, flanneldRuns bool) (string, error) {
			block := regexp.MustCompile(`(?ms)^status=.*?^fi\n`).FindString(script)
			Expect(block).To(HavePrefix("status=" + statusFile + "\n"))
			return runsBlock(block, filepath.Join(GinkgoT().TempDir(), "flanneld.pid"), status, flanneldRuns)
		}

		// flanneld's container (vcap) can write in the status file's directory: whatever it left at the path,
		// monit's start must not fail on it, and nothing the path leads to is touched.
		DescribeTable("removes whatever is at the status path unless flanneld still runs",
			func(plant func(path string) (kept string)) {
				status := filepath.Join(GinkgoT().TempDir(), "status.json")
				kept := plant(status)
				out, err := clearStatus(status, false)
				Expect(err).NotTo(HaveOccurred(), out)
				_, err = os.Lstat(status)
				Expect(err).To(MatchError(os.ErrNotExist))
				if kept != "" {
					Expect(kept).To(BeAnExistingFile())
				}
			},
			Entry("nothing", func(path string) string { return "" }),
			Entry("an earlier run's status", func(path string) string {
				Expect(os.WriteFile(path, []byte(`{"state": "ready"}`), 0o600)).To(Succeed())
				return ""
			}),
			Entry("a directory with files in it", func(path string) string {
				Expect(os.MkdirAll(filepath.Join(path, "sub"), 0o755)).To(Succeed())
				Expect(os.WriteFile(filepath.Join(path, "sub", "x"), nil, 0o600)).To(Succeed())
				return ""
			}),
			Entry("a named pipe", func(path string) string {
				Expect(syscall.Mkfifo(path, 0o600)).To(Succeed())
				return ""
			}),
			Entry("a link to /dev/zero", func(path string) string {
				Expect(os.Symlink("/dev/zero", path)).To(Succeed())
				return "/dev/zero"
			}),
			Entry("a link to a directory", func(path string) string {
				target := GinkgoT().TempDir()
				Expect(os.WriteFile(filepath.Join(target, "precious"), nil, 0o600)).To(Succeed())
				Expect(os.Symlink(target, path)).To(Succeed())
				return filepath.Join(target, "precious")
			}),
		)

		// placeholder runs the script's lines that leave bpm an empty pidfile, with a bpm that says whether
		// flanneld runs and the pidfile moved into a temporary directory.
		placeholder := func(pidfile string, flanneldRuns bool) (string, error) {
			block := regexp.MustCompile(`(?ms)^if \[\[ \$running == false && ! -e \$bpm_pidfile .*?\]\]; then\n.*?^fi\n`).FindString(script)
			Expect(block).NotTo(BeEmpty())
			return runsBlock(block, pidfile, statusFile, flanneldRuns)
		}

		// On a stemcell any local user can make entries in /var/vcap/sys/run, before the first deploy and after
		// every reboot. Each plant is made by nobody (vcap here); what it returns must be as it was.
		DescribeTable("takes nothing that another user made in the run directory, and writes through no link there",
			func(plant func(run string) (untouched string)) {
				root, run := stemcellRoot()
				untouched := plant(run)
				before := snapshot(untouched)
				preparePaths(root)
				pidfile := filepath.Join(run, "bpm/flanneld/flanneld.pid")
				out, err := placeholder(pidfile, false)
				Expect(err).NotTo(HaveOccurred(), out)
				Expect(snapshot(untouched)).To(Equal(before), untouched)
				expectOwned(root, "var/vcap/sys/run/flanneld", os.ModeDir|0o750, 65534, 65534)
				for _, bpmDir := range []string{"bpm", "bpm/flanneld", "bpm-runc"} {
					expectOwned(root, "var/vcap/sys/run/"+bpmDir, os.ModeDir|0o700, 0, 0)
				}
				expectOwned(root, "var/vcap/sys/run/bpm/flanneld/flanneld.pid", 0o644, 0, 0)
				Expect(os.ReadFile(pidfile)).To(BeEmpty())
			},
			Entry("bpm's pidfile, a link to a file that root would create", func(run string) string {
				plantDirs(run, "bpm", "bpm/flanneld")
				return plantLink(run, "bpm/flanneld/flanneld.pid", filepath.Join(filepath.Dir(run), "nologin"))
			}),
			Entry("bpm's pidfile, a link to a file of root's", func(run string) string {
				plantDirs(run, "bpm", "bpm/flanneld")
				return plantLink(run, "bpm/flanneld/flanneld.pid", rootsFile(filepath.Dir(run), "shadow"))
			}),
			Entry("the job's directory of bpm, under root's bpm directory", func(run string) string {
				Expect(os.Mkdir(filepath.Join(run, "bpm"), 0o700)).To(Succeed())
				plantDirs(run, "bpm/flanneld")
				return plantLink(run, "bpm/flanneld/flanneld.lock", rootsFile(filepath.Dir(run), "shadow"))
			}),
			Entry("bpm's directory, a link to root's directory", func(run string) string {
				target := filepath.Join(filepath.Dir(run), "elsewhere")
				Expect(os.MkdirAll(filepath.Join(target, "flanneld"), 0o700)).To(Succeed())
				plantLink(run, "bpm", target)
				return target
			}),
			Entry("runc's state directory of bpm, with a container's state in it", func(run string) string {
				plantDirs(run, "bpm-runc", "bpm-runc/flanneld")
				return plantLink(run, "bpm-runc/flanneld/state.json", rootsFile(filepath.Dir(run), "shadow"))
			}),
			Entry("flanneld's directory, a link to root's directory, which root would chown", func(run string) string {
				target := filepath.Join(filepath.Dir(run), "elsewhere")
				Expect(os.Mkdir(target, 0o755)).To(Succeed())
				plantLink(run, "flanneld", target)
				return target
			}),
		)

		It("makes nothing under a run directory that others can write and that is not sticky, and names it", func() {
			root, run := stemcellRoot()
			Expect(os.Chmod(run, 0o777)).To(Succeed())
			out, err, _ := prepare(root)
			Expect(err).To(HaveOccurred())
			Expect(out).To(Equal(fmt.Sprintf("Not making %[1]s/flanneld: %[1]s is not a directory of root's that only root can write or that is sticky (root:nogroup 777 directory)\n", run)))
			Expect(os.ReadDir(run)).To(BeEmpty())
		})

		// After a reboot bpm 0.12.2 cannot clean up the dead container without its pidfile (it removes it with
		// os.Remove, which fails on a missing file) and starts nothing.
		It("leaves bpm an empty pidfile when there is none and flanneld does not run", func() {
			pidfile := filepath.Join(GinkgoT().TempDir(), "run", "bpm", "flanneld", "flanneld.pid")
			Expect(os.MkdirAll(filepath.Dir(pidfile), 0o700)).To(Succeed()) // as the lines before make it
			out, err := placeholder(pidfile, false)
			Expect(err).NotTo(HaveOccurred(), out)
			Expect(os.ReadFile(pidfile)).To(BeEmpty())
		})

		It("leaves bpm's pidfile alone when there is one, and what it says when flanneld runs", func() {
			pidfile := filepath.Join(GinkgoT().TempDir(), "flanneld.pid")
			dead := []byte(fmt.Sprintf("%d\n", deadPID()))
			Expect(os.WriteFile(pidfile, dead, 0o644)).To(Succeed())
			out, err := placeholder(pidfile, false)
			Expect(err).NotTo(HaveOccurred(), out)
			Expect(os.ReadFile(pidfile)).To(Equal(dead))

			live := filepath.Join(GinkgoT().TempDir(), "live", "flanneld.pid")
			out, err = placeholder(live, true)
			Expect(err).NotTo(HaveOccurred(), out)
			Expect(os.ReadFile(live)).To(Equal([]byte(fmt.Sprintf("%d\n", os.Getpid()))))
		})

		It("leaves the status of a flanneld that still runs", func() {
			status := filepath.Join(GinkgoT().TempDir(), "status.json")
			Expect(os.WriteFile(status, []byte(`{"state": "ready"}`), 0o600)).To(Succeed())
			out, err := clearStatus(status, true)
			Expect(err).NotTo(HaveOccurred(), out)
			Expect(status).To(BeAnExistingFile())
		})
	})

	Describe("bin/post-start", func() {
		// waitReadyArgs runs the rendered script with the launcher replaced by printf, so that bash shows the
		// arguments it would pass.
		waitReadyArgs := func(script string) []string {
			launcher := "/var/vcap/packages/flannel-launcher/bin/flannel-launcher"
			Expect(script).To(ContainSubstring("exec " + launcher + " wait-ready"))
			expectPackagedExecutable(launcher)
			cmd := exec.Command("bash", "-c", strings.Replace(script, "exec "+launcher, `printf '%s\n'`, 1))
			out, err := cmd.Output()
			Expect(err).NotTo(HaveOccurred())
			return strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
		}

		It("waits for the launcher with the rendered config, the status bpm.yml names and the default timeout", func() {
			script := string(rendered.Files["bin/post-start"])
			expectBashSyntax(script)
			Expect(waitReadyArgs(script)).To(Equal([]string{"wait-ready",
				"--config", "/var/vcap/jobs/flanneld/config/" + filepath.Base(launcherConfig),
				"--status", statusFile, "--timeout", "60s"}))
		})

		It("passes launcher.ready-timeout", func() {
			rendered, err := renderer.Render(flanneld, withTLS(map[string]interface{}{"launcher.ready-timeout": "1m30s"}), worker(0))
			Expect(err).NotTo(HaveOccurred())
			Expect(waitReadyArgs(string(rendered.Files["bin/post-start"]))).To(ContainElements("--timeout", "1m30s"))
		})
	})
})

// deadPID is the PID of a process that has ended and been reaped.
func deadPID() int {
	cmd := exec.Command("true")
	Expect(cmd.Run()).To(Succeed())
	return cmd.Process.Pid
}

// expectOwned expects path under root to have mode (type included), uid and gid, not following a link.
func expectOwned(root, path string, mode os.FileMode, uid, gid uint32) {
	GinkgoHelper()
	info, err := os.Lstat(filepath.Join(root, path))
	Expect(err).NotTo(HaveOccurred())
	Expect(info.Mode()).To(Equal(mode), path)
	stat := info.Sys().(*syscall.Stat_t)
	Expect([]uint32{stat.Uid, stat.Gid}).To(Equal([]uint32{uid, gid}), path)
}

// plantDirs makes directories under run as nobody would: nobody's, mode 0755.
func plantDirs(run string, paths ...string) {
	GinkgoHelper()
	for _, p := range paths {
		Expect(os.Mkdir(filepath.Join(run, p), 0o755)).To(Succeed())
		Expect(os.Lchown(filepath.Join(run, p), 65534, 65534)).To(Succeed())
	}
}

// plantLink makes a link of nobody's at path under run to target, and returns target.
func plantLink(run, path, target string) string {
	GinkgoHelper()
	Expect(os.Symlink(target, filepath.Join(run, path))).To(Succeed())
	Expect(os.Lchown(filepath.Join(run, path), 65534, 65534)).To(Succeed())
	return target
}

// rootsFile makes a file of root's, mode 0600, with something in it, in dir, and returns its path.
func rootsFile(dir, name string) string {
	GinkgoHelper()
	path := filepath.Join(dir, name)
	Expect(os.WriteFile(path, []byte("root:secret\n"), 0o600)).To(Succeed())
	return path
}

// snapshot describes what is at path (followed) and, for a directory, what it holds: type, mode, owner and
// content of each, or that nothing is there.
func snapshot(path string) []string {
	GinkgoHelper()
	var seen []string
	err := filepath.Walk(path, func(p string, info os.FileInfo, err error) error {
		if os.IsNotExist(err) {
			seen = append(seen, p+" missing")
			return nil
		}
		Expect(err).NotTo(HaveOccurred())
		stat := info.Sys().(*syscall.Stat_t)
		line := fmt.Sprintf("%s %v %d:%d", p, info.Mode(), stat.Uid, stat.Gid)
		if info.Mode().IsRegular() {
			data, err := os.ReadFile(p)
			Expect(err).NotTo(HaveOccurred())
			line += " " + string(data)
		}
		seen = append(seen, line)
		return nil
	})
	Expect(err).NotTo(HaveOccurred())
	return seen
}
