package templates_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestTemplates(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Templates Suite")
}

// lib is bosh-common's lib directory, unpacked from the director's sources in ../shared/thirdparty.
var lib string

var _ = BeforeSuite(func() {
	archives, err := filepath.Glob("../../../../shared/thirdparty/bosh-director-templates-*.tgz")
	Expect(err).NotTo(HaveOccurred())
	Expect(archives).To(HaveLen(1), "the director's template code in ../shared/thirdparty")
	dir := GinkgoT().TempDir()
	out, err := exec.Command("tar", "-xzf", archives[0], "-C", dir).CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), string(out))
	libs, err := filepath.Glob(filepath.Join(dir, "*", "src", "bosh-common", "lib"))
	Expect(err).NotTo(HaveOccurred())
	Expect(libs).To(HaveLen(1))
	lib = libs[0]
	_, err = os.Stat(filepath.Join(lib, "bosh", "common", "template", "evaluation_context.rb"))
	Expect(err).NotTo(HaveOccurred())
})
