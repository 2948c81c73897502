package finalrelease_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/flannel-dns/flannel-dns/src/finalrelease"
)

func manifest(jobs, packages map[string]string) finalrelease.Manifest {
	m := finalrelease.Manifest{Name: "flannel-dns"}
	for name, fp := range jobs {
		m.Jobs = append(m.Jobs, finalrelease.Archive{Name: name, Fingerprint: fp})
	}
	for name, fp := range packages {
		m.Packages = append(m.Packages, finalrelease.Archive{Name: name, Fingerprint: fp})
	}
	return m
}

var _ = Describe("CompareFingerprints", func() {
	jobs := map[string]string{"flanneld": "j1", "cfcr-dns-aliases": "j2"}
	packages := map[string]string{"flannel": "p1", "flannel-launcher": "p2", "golang-1-linux": "p3"}

	It("finds nothing when every fingerprint matches", func() {
		Expect(finalrelease.CompareFingerprints(manifest(jobs, packages), manifest(jobs, packages))).To(BeEmpty())
	})

	It("lists jobs, then packages, that differ or that one side lacks", func() {
		mainJobs := map[string]string{"flanneld": "j1-new", "cfcr-dns-aliases": "j2", "extra": "j3"}
		mainPackages := map[string]string{"flannel": "p1", "flannel-launcher": "p2-new"}
		diffs := finalrelease.CompareFingerprints(manifest(jobs, packages), manifest(mainJobs, mainPackages))
		Expect(diffs).To(Equal([]finalrelease.Difference{
			{Kind: "job", Name: "extra", Main: "j3"},
			{Kind: "job", Name: "flanneld", Final: "j1", Main: "j1-new"},
			{Kind: "package", Name: "flannel-launcher", Final: "p2", Main: "p2-new"},
			{Kind: "package", Name: "golang-1-linux", Final: "p3"},
		}))
		Expect(diffs[0].String()).To(Equal("job `extra` (only in main)"))
		Expect(diffs[1].String()).To(Equal("job `flanneld` (j1 in the release, j1-new in main)"))
		Expect(diffs[3].String()).To(Equal("package `golang-1-linux` (not in main)"))
	})
})
