package spectests_test

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

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

		It("removes an earlier run's status unless flanneld still runs, then hands over to bpm", func() {
			Expect(script).To(ContainSubstring("if ! /var/vcap/jobs/bpm/bin/bpm pid flanneld >/dev/null 2>&1; then\n  rm -f " + statusFile + "\nfi\n"))
			Expect(script).To(HaveSuffix("\nexec /var/vcap/jobs/bpm/bin/bpm start flanneld\n"))
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
