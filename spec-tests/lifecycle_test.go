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

	"github.com/flannel-dns/flannel-dns/src/jobrender"
)

// statusFile is where the job's bpm.yml tells the launcher to keep its status.
const statusFile = "/var/vcap/data/flanneld/status.json"

// monitProgram reads one quoted program or the pidfile of the job's monit check.
func monitProgram(monit []byte, key string) string {
	m := regexp.MustCompile(`(?m)^\s*` + key + ` "?([^"\n]+)"?$`).FindSubmatch(monit)
	Expect(m).NotTo(BeNil(), "no %q in %s", key, monit)
	return string(m[1])
}

var _ = Describe("flanneld's lifecycle under bpm", func() {
	var rendered jobrender.Rendered

	BeforeEach(func() {
		var err error
		rendered, err = renderer.Render(flanneld, withTLS(nil), worker(0))
		Expect(err).NotTo(HaveOccurred())
	})

	Describe("monit", func() {
		It("watches bpm's pidfile of the process, starts through bin/start and stops through bpm", func() {
			bpm, err := checkBPM(rendered.Files["config/bpm.yml"])
			Expect(err).NotTo(HaveOccurred())
			process := bpm.Process.Name
			monit := rendered.Files[jobrender.MonitPath]
			Expect(monitProgram(monit, "with pidfile")).To(Equal("/var/vcap/sys/run/bpm/" + flanneld.Name + "/" + process + ".pid"))
			Expect(monitProgram(monit, "start program")).To(Equal("/var/vcap/jobs/flanneld/bin/start"))
			Expect(rendered.Files).To(HaveKey("bin/start"))
			Expect(monitProgram(monit, "stop program")).To(Equal("/var/vcap/jobs/bpm/bin/bpm stop " + process))
		})
	})

	Describe("bin/start", func() {
		var script string

		BeforeEach(func() {
			script = string(rendered.Files["bin/start"])
			expectBashSyntax(script)
		})

		It("prepares every path outside /var/vcap that bpm mounts, as bpm drops or refuses a missing one", func() {
			bpm, err := checkBPM(rendered.Files["config/bpm.yml"])
			Expect(err).NotTo(HaveOccurred())
			volumes := bpm.Process.Unsafe.UnrestrictedVolumes
			Expect(volumes).NotTo(BeEmpty())
			for _, volume := range volumes {
				Expect(script).To(MatchRegexp(`(?m)^(install -d -o vcap -g vcap -m 0755|touch) %s$`, regexp.QuoteMeta(volume.Path)))
			}
			Expect(script).To(ContainSubstring("chgrp vcap /run/xtables.lock\nchmod 0660 /run/xtables.lock\n"))
		})

		It("sets up the kernel for pod traffic, as pre-start used to", func() {
			Expect(script).To(ContainSubstring("modprobe br_netfilter ||"))
			Expect(script).To(ContainSubstring("sysctl -q -e -w net.bridge.bridge-nf-call-iptables=1\n"))
			Expect(script).To(ContainSubstring("sysctl -q -w net.ipv4.ip_forward=1\n"))
		})

		It("hands over to bpm", func() {
			Expect(script).To(HaveSuffix("\nexec /var/vcap/jobs/bpm/bin/bpm start flanneld\n"))
		})

		// clearStatus runs the script's lines that clear an earlier run's status, as root under `set -euo
		// pipefail`, with a bpm that says whether flanneld runs and the status file moved into a temporary
		// directory (the rest of the script changes the host).
		clearStatus := func(status string, flanneldRuns bool) (string, error) {
			block := regexp.MustCompile(`(?ms)^if ! /var/vcap/jobs/bpm/bin/bpm pid flanneld .*?^fi\n`).FindString(script)
			Expect(block).To(ContainSubstring(statusFile))
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
