package finalrelease_test

import (
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/flannel-dns/flannel-dns/src/finalrelease"
	"github.com/flannel-dns/flannel-dns/src/finalrelease/fakerelease"
)

var release1 = fakerelease.Release1()

var _ = Describe("release tarballs", func() {
	var manifest finalrelease.Manifest

	BeforeEach(func() {
		var err error
		manifest, err = finalrelease.ParseManifest(release1.Manifest(), "flannel-dns-1.yml")
		Expect(err).NotTo(HaveOccurred())
	})

	open := func(r fakerelease.Release, tampered ...string) finalrelease.Tarball {
		path := filepath.Join(GinkgoT().TempDir(), "release.tgz")
		Expect(r.WriteTarball(path, tampered...)).To(Succeed())
		t, err := finalrelease.OpenTarball(path)
		Expect(err).NotTo(HaveOccurred())
		return t
	}

	It("reads release.MF and a digest of every job and package archive", func() {
		t := open(release1)
		Expect(t.Manifest).To(Equal(manifest))
		Expect(t.Manifest.CommitHash).To(Equal("3b53ee1"))
		Expect(t.Digests).To(HaveLen(5))
		Expect(t.Digests).To(HaveKeyWithValue("packages/flannel.tgz", manifest.Packages[0].SHA1))
		Expect(manifest.Packages[0].SHA1).To(MatchRegexp("^sha256:[0-9a-f]{64}$"))
	})

	It("passes a tarball whose archives have the digests the manifest records", func() {
		Expect(finalrelease.VerifyArchives(manifest, "flannel-dns-1.yml", open(release1))).To(Succeed())
	})

	It("names the archive whose bytes differ", func() {
		err := finalrelease.VerifyArchives(manifest, "flannel-dns-1.yml", open(release1, "packages/flannel-launcher.tgz"))
		Expect(err).To(MatchError(MatchRegexp(`^packages/flannel-launcher.tgz has sha256:[0-9a-f]{64} where flannel-dns-1.yml records sha256:[0-9a-f]{64}$`)))
	})

	It("names archives missing from the tarball or absent from the manifest", func() {
		other := release1
		other.Packages = map[string]string{"flannel": "d765a76e", "flannel-launcher": "4400d1d5", "golang-1-24-linux": "0"}
		err := finalrelease.VerifyArchives(manifest, "flannel-dns-1.yml", open(other))
		Expect(err).To(MatchError("packages/golang-1-linux.tgz is missing; packages/golang-1-24-linux.tgz is not in flannel-dns-1.yml"))
	})

	It("refuses a tarball without release.MF", func() {
		_, err := finalrelease.OpenTarball(filepath.Join(GinkgoT().TempDir(), "absent.tgz"))
		Expect(err).To(MatchError(ContainSubstring("Opening the release tarball")))
	})
})
