package spectests_test

import (
	"os/exec"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/flannel-dns/flannel-dns/jobrender"
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
