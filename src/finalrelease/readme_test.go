package finalrelease_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/flannel-dns/flannel-dns/src/finalrelease"
)

var _ = Describe("the README", func() {
	Describe("CheckNamesNewest", func() {
		It("passes when every manifest it names is the newest's", func() {
			readme := "bosh create-release releases/flannel-dns/flannel-dns-2.yml\nor releases/flannel-dns/flannel-dns-2.yml\n"
			Expect(finalrelease.NamedVersions(readme)).To(Equal([]int{2, 2}))
			Expect(finalrelease.CheckNamesNewest(readme, 2)).To(Succeed())
		})

		It("fails when it names release 1 while 2 is the newest", func() {
			readme := "bosh create-release releases/flannel-dns/flannel-dns-1.yml --tarball=/tmp/flannel-dns-1.tgz\n"
			Expect(finalrelease.CheckNamesNewest(readme, 2)).To(MatchError(
				"README.md names releases/flannel-dns/flannel-dns-1.yml, but the newest final release in releases/flannel-dns/index.yml is 2 (releases/flannel-dns/flannel-dns-2.yml)"))
		})

		It("fails when it names the newest beside an older one", func() {
			readme := "releases/flannel-dns/flannel-dns-2.yml, releases/flannel-dns/flannel-dns-1.yml\n"
			Expect(finalrelease.CheckNamesNewest(readme, 2)).To(MatchError(ContainSubstring("names releases/flannel-dns/flannel-dns-1.yml, but")))
		})

		It("fails when it names no final release", func() {
			readme := "bosh create-release --force --tarball=/tmp/flannel-dns-dev.tgz\n"
			Expect(finalrelease.CheckNamesNewest(readme, 2)).To(MatchError(
				"README.md names no releases/flannel-dns/flannel-dns-N.yml; it should name releases/flannel-dns/flannel-dns-2.yml, the newest final release in releases/flannel-dns/index.yml"))
		})
	})

	Describe("CheckCutFrom", func() {
		diffs := []finalrelease.Difference{
			{Kind: "job", Name: "flanneld", Final: "aaa", Main: "bbb"},
			{Kind: "package", Name: "flannel-launcher", Final: "ccc", Main: "ddd"},
		}

		It("passes without a word when nothing differs", func() {
			Expect(finalrelease.CheckCutFrom("# flannel-dns\n", 1, "3b53ee1", nil)).To(Succeed())
		})

		It("passes when a paragraph names the commit, wrapped over lines, and what differs", func() {
			readme := "# Building\n\nSome text. Final release 1 was cut\nfrom commit 3b53ee1f00d; since then main\nchanged `flannel-launcher` and\nthe `flanneld` job.\n\nMore.\n"
			Expect(finalrelease.CheckCutFrom(readme, 1, "3b53ee1", diffs)).To(Succeed())
		})

		It("takes the manifest's longer hash and a backticked short one", func() {
			readme := "Final release 1 was cut from commit `3b53ee1`: `flanneld` and `flannel-launcher` changed since.\n"
			Expect(finalrelease.CheckCutFrom(readme, 1, "3b53ee1f00dcafe", diffs)).To(Succeed())
		})

		It("fails when a fingerprint differs and the README is silent", func() {
			readme := "# flannel-dns\n\nbosh create-release releases/flannel-dns/flannel-dns-1.yml\n"
			Expect(finalrelease.CheckCutFrom(readme, 1, "3b53ee1", diffs)).To(MatchError(
				"final release 1 (releases/flannel-dns/flannel-dns-1.yml) differs from main in job `flanneld` (aaa in the release, bbb in main), package `flannel-launcher` (ccc in the release, ddd in main), and README.md has no paragraph saying \"Final release 1 was cut from commit 3b53ee1\" that names them"))
		})

		It("fails when the README names the wrong commit", func() {
			readme := "Final release 1 was cut from commit 3b53ee2: `flanneld` and `flannel-launcher` changed since.\n"
			Expect(finalrelease.CheckCutFrom(readme, 1, "3b53ee1", diffs)).To(MatchError(
				"README.md says final release 1 was cut from commit 3b53ee2, but releases/flannel-dns/flannel-dns-1.yml records commit_hash 3b53ee1 (a prefix either way, at least 7 hex digits, is needed)"))
		})

		It("fails on a commit shorter than 7 hex digits", func() {
			readme := "Final release 1 was cut from commit 3b53ee: `flanneld` and `flannel-launcher` changed since.\n"
			Expect(finalrelease.CheckCutFrom(readme, 1, "3b53ee1", diffs)).To(MatchError(ContainSubstring("cut from commit 3b53ee, but")))
		})

		It("does not take the sentence of another release", func() {
			readme := "Final release 2 was cut from commit 3b53ee1: `flanneld` and `flannel-launcher` changed since.\n"
			Expect(finalrelease.CheckCutFrom(readme, 1, "3b53ee1", diffs)).To(MatchError(ContainSubstring("has no paragraph saying")))
		})

		It("fails naming what the paragraph leaves out, even when another paragraph names it", func() {
			readme := "Final release 1 was cut from commit 3b53ee1; `flanneld` changed since.\n\nThe `flannel-launcher` package.\n"
			Expect(finalrelease.CheckCutFrom(readme, 1, "3b53ee1", diffs)).To(MatchError(
				"README.md: the paragraph saying final release 1 was cut from commit 3b53ee1 does not name package `flannel-launcher` (ccc in the release, ddd in main), whose fingerprint differs from main's"))
		})

		It("wants a name in backticks, not a longer name that contains it", func() {
			readme := "Final release 1 was cut from commit 3b53ee1; `flanneld` and `flannel-launcher-tests` changed since.\n"
			Expect(finalrelease.CheckCutFrom(readme, 1, "3b53ee1", diffs)).To(MatchError(ContainSubstring("does not name package `flannel-launcher`")))
		})
	})
})
