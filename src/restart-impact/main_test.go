package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	"github.com/onsi/gomega/gexec"

	"github.com/flannel-dns/flannel-dns/src/director/interpolate"
)

func restartImpact(args ...string) *gexec.Session {
	cmd := exec.Command(binary, append([]string{"--release-dir", repoRoot, "--bosh", interpolate.BoshPath()}, args...)...)
	session, err := gexec.Start(cmd, GinkgoWriter, GinkgoWriter)
	Expect(err).NotTo(HaveOccurred())
	return session.Wait("5m")
}

// manifest interpolates the v0.32.0 fixture with the given ops (each a YAML list of operations) into a file.
func manifest(adopt bool, masters int, extraOps ...string) string {
	dir := GinkgoT().TempDir()
	ops := []string{"- {type: replace, path: /instance_groups/name=master/instances, value: " + strconv.Itoa(masters) + "}\n"}
	ops = append(ops, extraOps...)
	var files []string
	if adopt {
		files = append(files,
			filepath.Join(repoRoot, "manifests", "ops-files", "use-flannel-dns.yml"),
			filepath.Join(repoRoot, "manifests", "ops-files", "flannel-dns-tls-etcd-v0-29-0.yml"))
	}
	for i, op := range ops {
		path := filepath.Join(dir, "op"+strconv.Itoa(i)+".yml")
		Expect(os.WriteFile(path, []byte(op), 0o600)).To(Succeed())
		files = append(files, path)
	}
	fixture := filepath.Join(repoRoot, "..", "shared", "fixtures", "cfcr-v0.32.0.yml")
	out, err := interpolate.Manifest(interpolate.BoshPath(), fixture, files...)
	Expect(err).NotTo(HaveOccurred())
	path := filepath.Join(dir, "manifest.yml")
	Expect(os.WriteFile(path, out, 0o600)).To(Succeed())
	return path
}

var _ = Describe("restart-impact", func() {
	It("exits 0 when nothing differs", func() {
		m := manifest(true, 3)
		session := restartImpact(m, m)
		Expect(session).To(gexec.Exit(0))
		Expect(session.Out).To(gbytes.Say("master: no change to existing instances\nworker: no change to existing instances\n"))
	})

	It("leaves workers alone when masters scale with flannel-dns, and says why masters update", func() {
		session := restartImpact(manifest(true, 3), manifest(true, 5))
		Expect(session).To(gexec.Exit(1))
		Expect(session.Out).To(gbytes.Say("master: existing instances would be updated\n  jobs that list other instances, while a group changes size: kubo/kube-apiserver, cfcr-etcd/etcd\n  instances: 3 -> 5\n"))
		Expect(session.Out).To(gbytes.Say("worker: no change to existing instances\n"))
	})

	It("names the listing jobs on the workers of the unmodified manifest", func() {
		session := restartImpact(manifest(false, 3), manifest(false, 5))
		Expect(session).To(gexec.Exit(1))
		Expect(session.Out).To(gbytes.Say("worker: existing instances would be updated\n  jobs that list other instances, while a group changes size: kubo/flanneld, kubo/kubo-dns-aliases\n"))
	})

	It("names flanneld's files that a pod network change reaches", func() {
		cidr := "- type: replace\n  path: /instance_groups/name=worker/jobs/name=flanneld/properties/pod-network-cidr?\n  value: 198.18.0.0/16\n"
		session := restartImpact(manifest(true, 3), manifest(true, 3, cidr))
		Expect(session).To(gexec.Exit(1))
		Expect(session.Out).To(gbytes.Say("master: no change to existing instances\nworker: existing instances would be updated\n  flannel-dns/flanneld renders differently: "))
	})

	It("shows the adoption itself: this release's jobs added, kubo's replaced, bpm added to the workers", func() {
		session := restartImpact(manifest(false, 3), manifest(true, 3))
		Expect(session).To(gexec.Exit(1))
		Expect(session.Out).To(gbytes.Say("worker: existing instances would be updated\n  flannel-dns/flanneld renders differently: \\(added\\)\n  flannel-dns/cfcr-dns-aliases renders differently: \\(added\\)\n  manifest entries differ \\(other releases, not rendered here\\): flanneld, kubo-dns-aliases, bpm\n"))
	})

	It("applies runtime config addons, filtered on the deployment's teams", func() {
		rc := filepath.Join(GinkgoT().TempDir(), "runtime.yml")
		Expect(os.WriteFile(rc, []byte("addons:\n- name: listing\n  include: {teams: [ops]}\n  jobs: [{name: route-sync, release: kubo}]\n"), 0o600)).To(Succeed())
		old, new := manifest(true, 3), manifest(true, 5)

		session := restartImpact("--runtime-config", rc, old, new)
		Expect(session).To(gexec.Exit(1))
		Expect(session.Out).To(gbytes.Say("worker: no change to existing instances\n"))

		session = restartImpact("--runtime-config", rc, "--team", "ops", old, new)
		Expect(session).To(gexec.Exit(1))
		Expect(session.Out).To(gbytes.Say("worker: existing instances would be updated\n  jobs that list other instances, while a group changes size: kubo/route-sync\n"))
	})

	It("runs through scripts/restart-impact, which builds it and finds the release and the bosh CLI", func() {
		m := manifest(true, 3)
		session, err := gexec.Start(exec.Command(filepath.Join(repoRoot, "scripts", "restart-impact"), m, m), GinkgoWriter, GinkgoWriter)
		Expect(err).NotTo(HaveOccurred())
		Eventually(session, "5m").Should(gexec.Exit(0))
		Expect(session.Out).To(gbytes.Say("worker: no change to existing instances\n"))
	})

	It("exits 2 with the usage when the arguments are wrong", func() {
		session := restartImpact("only-one.yml")
		Expect(session).To(gexec.Exit(2))
		Expect(session.Err).To(gbytes.Say("Usage: restart-impact \\[flags\\] OLD_MANIFEST NEW_MANIFEST"))
	})

	It("exits 2 naming a manifest it cannot read", func() {
		session := restartImpact("/nonexistent/old.yml", "/nonexistent/new.yml")
		Expect(session).To(gexec.Exit(2))
		Expect(session.Err).To(gbytes.Say("Error: Reading manifest '/nonexistent/old.yml'"))
	})
})
