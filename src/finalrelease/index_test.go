package finalrelease_test

import (
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/flannel-dns/flannel-dns/src/finalrelease"
)

var _ = Describe("NewestVersion", func() {
	var repo string

	writeIndex := func(content string) {
		path := filepath.Join(repo, finalrelease.IndexPath)
		Expect(os.MkdirAll(filepath.Dir(path), 0o755)).To(Succeed())
		Expect(os.WriteFile(path, []byte(content), 0o644)).To(Succeed())
	}

	BeforeEach(func() {
		repo = GinkgoT().TempDir()
	})

	It("compares versions as numbers", func() {
		writeIndex("builds:\n  a: {version: \"9\"}\n  b: {version: \"10\"}\n  c: {version: \"2\"}\nformat-version: \"2\"\n")
		Expect(finalrelease.NewestVersion(repo)).To(Equal(10))
	})

	It("refuses a version that is not a whole number", func() {
		writeIndex("builds:\n  a: {version: \"1\"}\n  b: {version: \"1.1\"}\n")
		_, err := finalrelease.NewestVersion(repo)
		Expect(err).To(MatchError("releases/flannel-dns/index.yml: build b has version '1.1', not a whole number"))
	})

	It("refuses an index without releases", func() {
		writeIndex("builds: {}\nformat-version: \"2\"\n")
		_, err := finalrelease.NewestVersion(repo)
		Expect(err).To(MatchError("releases/flannel-dns/index.yml lists no final release"))
	})

	It("says when there is no index", func() {
		_, err := finalrelease.NewestVersion(repo)
		Expect(err).To(MatchError(ContainSubstring("Reading the final release index")))
	})
})
