package finalrelease_test

import (
	"os"
	"os/exec"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"

	"github.com/flannel-dns/flannel-dns/src/finalrelease"
	"github.com/flannel-dns/flannel-dns/src/finalrelease/fakerelease"
)

// canIsolate is whether Rebuild should run bosh in a network namespace of its own here.
func canIsolate() bool {
	return os.Geteuid() == 0 && exec.Command("unshare", "--net", "true").Run() == nil
}

var _ = Describe("Rebuild", func() {
	var repo, tools, prepared string

	BeforeEach(func() {
		repo, tools = GinkgoT().TempDir(), GinkgoT().TempDir()
		Expect(fakerelease.WriteRepo(repo, "# flannel-dns\n", release1)).To(Succeed())
		// Not committed: the copy must not have it, and the stand-in bosh fails if it does.
		Expect(os.WriteFile(filepath.Join(repo, "uncommitted"), nil, 0o644)).To(Succeed())
		prepared = filepath.Join(tools, "prepared.tgz")
		Expect(release1.WriteTarball(prepared)).To(Succeed())
	})

	It("runs bosh in a copy of HEAD with the committed blobstore alone, an empty HOME and, as root, no network", func() {
		bosh, err := fakerelease.WriteBosh(tools, prepared)
		Expect(err).NotTo(HaveOccurred())
		log := gbytes.NewBuffer()
		work := GinkgoT().TempDir()
		rebuilt, err := finalrelease.Rebuild{Repo: repo, Bosh: bosh, Version: 1, WorkDir: work, Log: log}.Run()
		Expect(err).NotTo(HaveOccurred(), string(log.Contents()))
		Expect(rebuilt.Tarball).To(Equal(filepath.Join(work, "flannel-dns-1.tgz")))
		Expect(os.ReadFile(rebuilt.Tarball)).To(Equal(must(os.ReadFile(prepared))))
		Expect(rebuilt.Isolated).To(Equal(canIsolate()))
		if rebuilt.Isolated {
			Expect(os.ReadFile(filepath.Join(tools, "interfaces"))).To(BeEmpty())
		}
	})

	It("fails with bosh's last line when bosh fails", func() {
		bosh, err := fakerelease.WriteBosh(tools, filepath.Join(tools, "absent.tgz"))
		Expect(err).NotTo(HaveOccurred())
		_, err = finalrelease.Rebuild{Repo: repo, Bosh: bosh, Version: 1, WorkDir: GinkgoT().TempDir()}.Run()
		Expect(err).To(MatchError(MatchRegexp(`^bosh create-release releases/flannel-dns/flannel-dns-1.yml in a copy of HEAD: cp: .*absent.tgz.*: exit status 1$`)))
	})

	It("fails when HEAD has no such release", func() {
		bosh, err := fakerelease.WriteBosh(tools, prepared)
		Expect(err).NotTo(HaveOccurred())
		_, err = finalrelease.Rebuild{Repo: repo, Bosh: bosh, Version: 2, WorkDir: GinkgoT().TempDir()}.Run()
		Expect(err).To(MatchError(ContainSubstring("no releases/flannel-dns/flannel-dns-2.yml in")))
	})
})

func must[T any](v T, err error) T {
	Expect(err).NotTo(HaveOccurred())
	return v
}
