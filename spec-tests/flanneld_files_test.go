package spectests_test

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/flannel-dns/flannel-dns/src/jobrender"
)

var _ = Describe("flanneld's other files", func() {
	render := func(dotted map[string]interface{}) jobrender.Rendered {
		rendered, err := renderer.Render(flanneld, withTLS(dotted), worker(0))
		Expect(err).NotTo(HaveOccurred())
		return rendered
	}

	It("writes the TLS material as given, a pair that loads and a CA pool", func() {
		rendered := render(nil)
		Expect(string(rendered.Files["config/etcd-ca.crt"])).To(Equal(tlsPEMs.ca))
		_, err := tls.X509KeyPair(rendered.Files["config/etcd-client.crt"], rendered.Files["config/etcd-client.key"])
		Expect(err).NotTo(HaveOccurred())
		Expect(x509.NewCertPool().AppendCertsFromPEM(rendered.Files["config/etcd-ca.crt"])).To(BeTrue())
	})

	Describe("bpm.yml", func() {
		// as bpm reads it (bpm_test.go)
		parse := func(rendered jobrender.Rendered) bpmView {
			view, err := checkBPM(rendered.Files["config/bpm.yml"])
			Expect(err).NotTo(HaveOccurred())
			return view
		}

		It("runs the launcher from a package of the job with the rendered config", func() {
			process := parse(render(nil)).Process
			Expect(process.Name).To(Equal("flanneld"), "monit starts the process named like the job")
			Expect(process.Args).To(Equal([]string{"run", "--config", "/var/vcap/jobs/flanneld/config/" + filepath.Base(launcherConfig),
				"--status", statusFile}))
			Expect(flanneld.Templates).To(ContainElement(launcherConfig))
			expectPackagedExecutable(process.Executable)
		})

		It("points the launcher at a flanneld that a package provides", func() {
			rendered, err := renderConfig(nil)
			Expect(err).NotTo(HaveOccurred())
			expectPackagedExecutable(lookup(rendered, "flanneld.path").(string))
		})

		It("grants only NET_ADMIN and NET_RAW, unprivileged, and only flanneld's run directory, /run/flannel to read and the xtables lock", func() {
			view := parse(render(map[string]interface{}{"subnet-file": "/run/flannel/other.env"}))
			process := view.Process
			Expect(process.Capabilities).To(ConsistOf("NET_ADMIN", "NET_RAW"))
			Expect(view.Capabilities.Bounding).To(ConsistOf("CAP_NET_ADMIN", "CAP_NET_RAW"))
			Expect(process.Unsafe.Privileged).To(BeFalse())
			writable := map[string]bool{}
			for _, volume := range process.Unsafe.UnrestrictedVolumes {
				Expect(volume.MountOnly).To(BeTrue(), "bin/start creates %s", volume.Path)
				writable[volume.Path] = volume.Writable
			}
			Expect(writable).To(Equal(map[string]bool{"/var/vcap/sys/run/flanneld": true, "/run/flannel": false,
				"/run/xtables.lock": true}))
		})

		It("lets flanneld write its subnet file, and the launcher only read the copy that docker's job sources", func() {
			for _, file := range []string{"/run/flannel/subnet.env", "/run/flannel/other.env"} {
				dotted := map[string]interface{}{"subnet-file": file}
				rendered, err := renderConfig(dotted)
				Expect(err).NotTo(HaveOccurred())
				volumes := parse(render(dotted)).Process.Unsafe.UnrestrictedVolumes
				Expect(volumes).To(ContainElement(SatisfyAll(
					HaveField("Path", filepath.Dir(lookup(rendered, "flanneld.subnet_file").(string))), HaveField("Writable", true))))
				Expect(volumes).To(ContainElement(SatisfyAll(
					HaveField("Path", filepath.Dir(lookup(rendered, "flanneld.published_subnet_file").(string))), HaveField("Writable", false))))
				Expect(lookup(rendered, "flanneld.published_subnet_file")).To(Equal(file))
			}
		})

		It("keeps the launcher's status in the job's data directory, which bpm mounts for it", func() {
			process := parse(render(nil)).Process
			Expect(process.EphemeralDisk).To(BeTrue(), "bpm mounts /var/vcap/data/flanneld only with ephemeral_disk")
			Expect(filepath.Dir(statusFile)).To(Equal("/var/vcap/data/" + flanneld.Name))
		})

		It("keeps the record of the network config it enforced in that directory too, enforce on or off", func() {
			for _, enforce := range []bool{true, false} {
				rendered, err := renderConfig(map[string]interface{}{"enforce-network-config": enforce})
				Expect(err).NotTo(HaveOccurred())
				Expect(filepath.Dir(lookup(rendered, "network.enforce_record").(string))).To(Equal(filepath.Dir(statusFile)))
			}
		})
	})

	Describe("bin/pre-start", func() {
		It("is valid bash that installs the CNI conflist and leaves what a reboot undoes to bin/start", func() {
			script := string(render(nil).Files["bin/pre-start"])
			expectBashSyntax(script)
			Expect(script).To(ContainSubstring("/var/vcap/jobs/flanneld/config/cni/50-flannel.conflist /etc/cni/net.d/50-flannel.conflist"))
			for _, rebootLoses := range []string{"/run/", "sysctl ", "modprobe ", "mknod "} {
				Expect(script).NotTo(ContainSubstring(rebootLoses))
			}
		})
	})

	It("renders an operator script that runs `flannel-launcher check` on the rendered config", func() {
		script := string(render(nil).Files["bin/flannel-check"])
		expectBashSyntax(script)
		Expect(script).To(ContainSubstring("/var/vcap/packages/flannel-launcher/bin/flannel-launcher check"))
		Expect(script).To(ContainSubstring("--config /var/vcap/jobs/flanneld/config/flannel-launcher.json"))
	})

	Describe("the CNI conflist", func() {
		type conflist struct {
			Name       string `json:"name"`
			CNIVersion string `json:"cniVersion"`
			Plugins    []struct {
				Type       string          `json:"type"`
				SubnetFile string          `json:"subnetFile"`
				Delegate   map[string]bool `json:"delegate"`
			} `json:"plugins"`
		}
		parse := func(rendered jobrender.Rendered) conflist {
			var list conflist
			Expect(json.Unmarshal(rendered.Files["config/cni/50-flannel.conflist"], &list)).To(Succeed())
			return list
		}

		It("is kubo's: flannel delegating with hairpin mode and default gateway, then portmap", func() {
			list := parse(render(nil))
			Expect(list.Name).To(Equal("flannel-network"))
			// The newest CNI version that kubo's plugins speak (its cni package: containernetworking/plugins
			// v0.7.1); they refuse a newer one with "incompatible CNI versions".
			Expect(list.CNIVersion).To(Equal("0.3.1"))
			Expect(list.Plugins).To(HaveLen(2))
			Expect(list.Plugins[0].Type).To(Equal("flannel"))
			Expect(list.Plugins[0].Delegate).To(Equal(map[string]bool{"hairpinMode": true, "isDefaultGateway": true}))
			Expect(list.Plugins[0].SubnetFile).To(BeEmpty())
			Expect(list.Plugins[1].Type).To(Equal("portmap"))
		})

		It("tells the flannel plugin about a subnet file that is not the default", func() {
			list := parse(render(map[string]interface{}{"subnet-file": "/run/flannel/other.env"}))
			Expect(list.Plugins[0].SubnetFile).To(Equal("/run/flannel/other.env"))
		})
	})
})

// expectPackagedExecutable checks that path is /var/vcap/packages/<package>/<file>, that the job depends on
// that package, and that the package's packaging script installs <file>.
func expectPackagedExecutable(path string) {
	rest, found := strings.CutPrefix(path, "/var/vcap/packages/")
	Expect(found).To(BeTrue(), "%s is not in a package", path)
	pkg, file, _ := strings.Cut(rest, "/")
	Expect(flanneld.Packages).To(ContainElement(pkg))
	packaging, err := os.ReadFile(filepath.Join("..", "packages", pkg, "packaging"))
	Expect(err).NotTo(HaveOccurred())
	Expect(string(packaging)).To(ContainSubstring("${BOSH_INSTALL_TARGET}/" + file))
}

func expectBashSyntax(script string) {
	Expect(script).To(HavePrefix("#!/usr/bin/env bash\n"))
	cmd := exec.Command("bash", "-n")
	cmd.Stdin = strings.NewReader(script)
	output, err := cmd.CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), string(output))
}

// withRunDirsLib makes block source the job's lib/run-dirs.sh as rendered, from a temporary file, instead of
// the path it has on a VM.
func withRunDirsLib(rendered jobrender.Rendered, block string) string {
	GinkgoHelper()
	const installed = "source /var/vcap/jobs/flanneld/lib/run-dirs.sh\n"
	Expect(block).To(ContainSubstring(installed))
	lib := filepath.Join(GinkgoT().TempDir(), "run-dirs.sh")
	Expect(os.WriteFile(lib, rendered.Files["lib/run-dirs.sh"], 0o644)).To(Succeed())
	return strings.Replace(block, installed, "source "+lib+"\n", 1)
}
