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
			for _, volume := range volumes {
				prepare := "install -d -o root -g root -m 0755"
				if volume.Writable {
					prepare = "(install -d -o vcap -g vcap -m 0750|touch)"
				}
				Expect(script).To(MatchRegexp(`(?m)^%s %s$`, prepare, regexp.QuoteMeta(volume.Path)))
			}
			Expect(script).To(ContainSubstring("chgrp vcap /run/xtables.lock\nchmod 0660 /run/xtables.lock\n"))
		})

		// takeBack runs the script's lines that make /run/flannel root's alone, as root under `set -euo
		// pipefail`, on dir instead.
		takeBack := func(dir string) {
			block := regexp.MustCompile(`(?ms)^if \[\[ -L /run/flannel .*?^install -d -o root -g root -m 0755 /run/flannel\n`).FindString(script)
			Expect(block).NotTo(BeEmpty())
			out, err := exec.Command("bash", "-c", "set -euo pipefail\n"+strings.ReplaceAll(block, "/run/flannel", dir)).CombinedOutput()
			Expect(err).NotTo(HaveOccurred(), string(out))
			info, err := os.Lstat(dir)
			Expect(err).NotTo(HaveOccurred())
			Expect(info.Mode()).To(Equal(os.ModeDir | 0o755))
			Expect(info.Sys().(*syscall.Stat_t).Uid).To(BeZero())
		}

		// An older release gave /run/flannel to vcap, who could leave anything there for docker's job to source.
		DescribeTable("takes /run/flannel back whole from anyone but root, whatever it holds, and touches nothing it leads to",
			func(plant func(dir string) (kept string)) {
				dir := filepath.Join(GinkgoT().TempDir(), "flannel")
				kept := plant(dir)
				takeBack(dir)
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
			dir := filepath.Join(GinkgoT().TempDir(), "flannel")
			Expect(os.Mkdir(dir, 0o755)).To(Succeed())
			Expect(os.Chmod(dir, 0o755)).To(Succeed())
			Expect(os.WriteFile(filepath.Join(dir, "subnet.env"), nil, 0o644)).To(Succeed())
			takeBack(dir)
			Expect(filepath.Join(dir, "subnet.env")).To(BeAnExistingFile())
		})

		It("sets up the kernel for pod traffic, as pre-start used to", func() {
			Expect(script).To(ContainSubstring("modprobe br_netfilter ||"))
			Expect(script).To(ContainSubstring("sysctl -q -e -w net.bridge.bridge-nf-call-iptables=1\n"))
			Expect(script).To(ContainSubstring("sysctl -q -w net.ipv4.ip_forward=1\n"))
		})

		It("asks bpm once whether flanneld runs: each bpm call delays the start", func() {
			Expect(strings.Count(script, "/var/vcap/jobs/bpm/bin/bpm ")).To(Equal(2)) // pid, then start
		})

		It("hands over to bpm", func() {
			Expect(script).To(HaveSuffix("\nexec /var/vcap/jobs/bpm/bin/bpm start flanneld\n"))
		})

		// askBPM is the script's lines that ask bpm once whether flanneld runs, which the blocks below rely on.
		askBPM := func() string {
			block := regexp.MustCompile(`(?ms)^running=false\n.*?^fi\n`).FindString(script)
			Expect(block).To(ContainSubstring("/var/vcap/jobs/bpm/bin/bpm pid flanneld"))
			return block
		}

		// clearStatus runs the script's lines that clear an earlier run's status, as root under `set -euo
		// pipefail`, with a bpm that says whether flanneld runs and the status file moved into a temporary
		// directory (the rest of the script changes the host).
		clearStatus := func(status string, flanneldRuns bool) (string, error) {
			block := regexp.MustCompile(`(?ms)^if \[\[ \$running == false \]\]; then\n.*?^fi\n`).FindString(script)
			Expect(block).To(ContainSubstring(statusFile))
			block = askBPM() + block
			bpm := filepath.Join(GinkgoT().TempDir(), "bpm")
			Expect(os.WriteFile(bpm, []byte(fmt.Sprintf("#!/bin/sh\nexit %d\n", map[bool]int{true: 0, false: 1}[flanneldRuns])), 0o755)).To(Succeed())
			block = strings.ReplaceAll(strings.ReplaceAll(block, "/var/vcap/jobs/bpm/bin/bpm", bpm), statusFile, status)
			out, err := exec.Command("bash", "-c", "set -euo pipefail\n"+block).CombinedOutput()
			return string(out), err
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
			const bpmPidfile = "/var/vcap/sys/run/bpm/flanneld/flanneld.pid"
			block := regexp.MustCompile(`(?ms)^bpm_pidfile=.*?^fi\n`).FindString(script)
			Expect(block).To(ContainSubstring(bpmPidfile))
			block = askBPM() + block
			bpm := filepath.Join(GinkgoT().TempDir(), "bpm")
			Expect(os.WriteFile(bpm, []byte(fmt.Sprintf("#!/bin/sh\nexit %d\n", map[bool]int{true: 0, false: 1}[flanneldRuns])), 0o755)).To(Succeed())
			block = strings.ReplaceAll(strings.ReplaceAll(block, "/var/vcap/jobs/bpm/bin/bpm", bpm), bpmPidfile, pidfile)
			out, err := exec.Command("bash", "-c", "set -euo pipefail\n"+block).CombinedOutput()
			return string(out), err
		}

		// After a reboot bpm 0.12.2 cannot clean up the dead container without its pidfile (it removes it with
		// os.Remove, which fails on a missing file) and starts nothing.
		It("leaves bpm an empty pidfile when there is none and flanneld does not run", func() {
			pidfile := filepath.Join(GinkgoT().TempDir(), "run", "bpm", "flanneld", "flanneld.pid")
			out, err := placeholder(pidfile, false)
			Expect(err).NotTo(HaveOccurred(), out)
			Expect(os.ReadFile(pidfile)).To(BeEmpty())
		})

		It("leaves bpm's pidfile alone when there is one, or when flanneld runs", func() {
			pidfile := filepath.Join(GinkgoT().TempDir(), "flanneld.pid")
			Expect(os.WriteFile(pidfile, []byte("4242\n"), 0o644)).To(Succeed())
			out, err := placeholder(pidfile, false)
			Expect(err).NotTo(HaveOccurred(), out)
			Expect(os.ReadFile(pidfile)).To(Equal([]byte("4242\n")))

			missing := filepath.Join(GinkgoT().TempDir(), "none", "flanneld.pid")
			out, err = placeholder(missing, true)
			Expect(err).NotTo(HaveOccurred(), out)
			Expect(missing).NotTo(BeAnExistingFile())
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
