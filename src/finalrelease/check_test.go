package finalrelease_test

import (
	"maps"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/flannel-dns/flannel-dns/src/finalrelease"
	"github.com/flannel-dns/flannel-dns/src/finalrelease/fakerelease"
)

// release2 is cut from main: its fingerprints are mainRelease's.
var (
	release2    = fakerelease.Release{Version: 2, CommitHash: "c0ffee1234", Jobs: release1.Jobs, Packages: changedLauncher()}
	mainRelease = fakerelease.Release{Version: 0, Jobs: release1.Jobs, Packages: changedLauncher()}
)

func changedLauncher() map[string]string {
	packages := maps.Clone(release1.Packages)
	packages["flannel-launcher"] = "5511e2e6"
	return packages
}

var _ = Describe("the checks on a repository", func() {
	var repo, devTarball string

	// setUp commits the releases and the README, and builds main's dev release tarball.
	setUp := func(readme string, releases ...fakerelease.Release) {
		repo = GinkgoT().TempDir()
		Expect(fakerelease.WriteRepo(repo, readme, releases...)).To(Succeed())
		devTarball = filepath.Join(GinkgoT().TempDir(), "flannel-dns-dev.tgz")
		Expect(mainRelease.WriteTarball(devTarball)).To(Succeed())
	}

	Describe("CheckNamed (a)", func() {
		It("fails when the README names release 1 while 2 is the newest", func() {
			setUp("bosh create-release releases/flannel-dns/flannel-dns-1.yml\n", release1, release2)
			_, err := finalrelease.CheckNamed(repo, must(finalrelease.NewestVersion(repo)))
			Expect(err).To(MatchError("README.md names releases/flannel-dns/flannel-dns-1.yml, but the newest final release in releases/flannel-dns/index.yml is 2 (releases/flannel-dns/flannel-dns-2.yml)"))
		})

		It("passes when it names release 2", func() {
			setUp("bosh create-release releases/flannel-dns/flannel-dns-2.yml\n", release1, release2)
			Expect(finalrelease.CheckNamed(repo, 2)).To(Equal(
				"README.md names releases/flannel-dns/flannel-dns-2.yml, the newest final release in releases/flannel-dns/index.yml"))
		})
	})

	Describe("CheckRebuild (b)", func() {
		var tools string

		BeforeEach(func() {
			setUp("releases/flannel-dns/flannel-dns-2.yml\n", release1, release2)
			tools = GinkgoT().TempDir()
		})

		It("passes when the rebuilt archives have the manifest's digests", func() {
			prepared := filepath.Join(tools, "prepared.tgz")
			Expect(release2.WriteTarball(prepared)).To(Succeed())
			bosh := must(fakerelease.WriteBosh(tools, prepared))
			Expect(finalrelease.CheckRebuild(repo, bosh, 2, nil)).To(ContainSubstring(
				"final release 2 rebuilds from releases/flannel-dns/blobstore/ alone"))
		})

		It("names the archive whose digest differs", func() {
			prepared := filepath.Join(tools, "prepared.tgz")
			Expect(release2.WriteTarball(prepared, "jobs/flanneld.tgz")).To(Succeed())
			bosh := must(fakerelease.WriteBosh(tools, prepared))
			_, err := finalrelease.CheckRebuild(repo, bosh, 2, nil)
			Expect(err).To(MatchError(MatchRegexp(`^The tarball of final release 2 rebuilt from releases/flannel-dns/blobstore/: jobs/flanneld.tgz has sha256:\w+ where releases/flannel-dns/flannel-dns-2.yml records sha256:\w+$`)))
		})
	})

	Describe("CheckFingerprints (c)", func() {
		It("passes when every fingerprint is main's", func() {
			setUp("releases/flannel-dns/flannel-dns-2.yml\n", release1, release2)
			Expect(finalrelease.CheckFingerprints(repo, devTarball, 2)).To(HavePrefix(
				"final release 2 has the fingerprints of main's dev release"))
		})

		It("fails when a fingerprint differs and the README is silent", func() {
			setUp("releases/flannel-dns/flannel-dns-1.yml\n", release1)
			_, err := finalrelease.CheckFingerprints(repo, devTarball, 1)
			Expect(err).To(MatchError("final release 1 (releases/flannel-dns/flannel-dns-1.yml) differs from main in package `flannel-launcher` (4400d1d5 in the release, 5511e2e6 in main), and README.md has no paragraph saying \"Final release 1 was cut from commit 3b53ee1\" that names them"))
		})

		It("fails when the README names the wrong commit", func() {
			setUp("Final release 1 was cut from commit 893834a; main has changed `flannel-launcher` since.\n", release1)
			_, err := finalrelease.CheckFingerprints(repo, devTarball, 1)
			Expect(err).To(MatchError(ContainSubstring("README.md says final release 1 was cut from commit 893834a, but releases/flannel-dns/flannel-dns-1.yml records commit_hash 3b53ee1")))
		})

		It("passes when the README says the commit and what main has changed", func() {
			setUp("Final release 1 was cut from commit 3b53ee1; main has changed `flannel-launcher` since.\n", release1)
			Expect(finalrelease.CheckFingerprints(repo, devTarball, 1)).To(Equal(
				"final release 1 differs from main in package `flannel-launcher` (4400d1d5 in the release, 5511e2e6 in main), as README.md says (cut from commit 3b53ee1)"))
		})
	})
})
