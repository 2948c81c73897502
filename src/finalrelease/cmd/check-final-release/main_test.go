package main_test

import (
	"maps"
	"os/exec"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	"github.com/onsi/gomega/gexec"

	"github.com/flannel-dns/flannel-dns/src/finalrelease/fakerelease"
)

var release1 = fakerelease.Release1()

var _ = Describe("check-final-release", func() {
	var repo, tools, devTarball, bosh string

	// setUp commits release 1 and the README, builds main's dev release with the launcher's fingerprint given,
	// and a stand-in bosh CLI that rebuilds release 1 as its manifest records it.
	setUp := func(readme, launcher string) {
		repo, tools = GinkgoT().TempDir(), GinkgoT().TempDir()
		Expect(fakerelease.WriteRepo(repo, readme, release1)).To(Succeed())
		main := release1
		main.Packages = maps.Clone(release1.Packages)
		main.Packages["flannel-launcher"] = launcher
		devTarball = filepath.Join(tools, "flannel-dns-dev.tgz")
		Expect(main.WriteTarball(devTarball)).To(Succeed())
		prepared := filepath.Join(tools, "prepared.tgz")
		Expect(release1.WriteTarball(prepared)).To(Succeed())
		var err error
		bosh, err = fakerelease.WriteBosh(tools, prepared)
		Expect(err).NotTo(HaveOccurred())
	}

	check := func(args ...string) *gexec.Session {
		session, err := gexec.Start(exec.Command(binary, args...), GinkgoWriter, GinkgoWriter)
		Expect(err).NotTo(HaveOccurred())
		return session.Wait("1m")
	}

	It("prints a line per check and exits 0 when all pass", func() {
		setUp("releases/flannel-dns/flannel-dns-1.yml\n", release1.Packages["flannel-launcher"])
		session := check("--repo", repo, "--bosh", bosh, "--dev-tarball", devTarball)
		Expect(session).To(gexec.Exit(0))
		Expect(session.Out).To(gbytes.Say(`^\(a\) ok: README.md names releases/flannel-dns/flannel-dns-1.yml, the newest final release in releases/flannel-dns/index.yml\n`))
		Expect(session.Out).To(gbytes.Say(`^\(b\) ok: final release 1 rebuilds from releases/flannel-dns/blobstore/ alone, .*\n`))
		Expect(session.Out).To(gbytes.Say(`^\(c\) ok: final release 1 has the fingerprints of main's dev release .*\n$`))
	})

	It("exits 1 and says what is wrong when main has changed a package the README does not name", func() {
		setUp("releases/flannel-dns/flannel-dns-1.yml\n", "5511e2e6")
		session := check("--repo", repo, "--bosh", bosh, "--dev-tarball", devTarball)
		Expect(session).To(gexec.Exit(1))
		Expect(session.Out).To(gbytes.Say(`\(b\) ok: .*\n\(c\) FAILED: final release 1 \(releases/flannel-dns/flannel-dns-1.yml\) differs from main in package ` + "`flannel-launcher`"))
	})

	It("shows bosh's output when the rebuild fails", func() {
		setUp("releases/flannel-dns/flannel-dns-1.yml\n", release1.Packages["flannel-launcher"])
		bosh, err := fakerelease.WriteBosh(GinkgoT().TempDir(), filepath.Join(tools, "absent.tgz"))
		Expect(err).NotTo(HaveOccurred())
		session := check("--repo", repo, "--bosh", bosh, "--dev-tarball", devTarball)
		Expect(session).To(gexec.Exit(1))
		Expect(session.Out).To(gbytes.Say(`\(a\) ok: .*\n\(b\) FAILED: Rebuilding final release 1 offline: bosh create-release releases/flannel-dns/flannel-dns-1.yml in a copy of HEAD: cp: .*absent.tgz.*\n\(c\) ok: `))
		Expect(session.Err).To(gbytes.Say(`\(b\) its output:\ncp: .*absent.tgz`))
	})

	It("exits 2 without --dev-tarball", func() {
		session := check("--repo", GinkgoT().TempDir())
		Expect(session).To(gexec.Exit(2))
		Expect(session.Err).To(gbytes.Say("Usage: check-final-release"))
	})
})
