package config_test

import (
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"
)

var loadCommand string

func TestConfig(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Config Suite")
}

// The load helper goes where any user may run it: gexec's build directory is private to its owner.
var _ = SynchronizedBeforeSuite(func() []byte {
	built, err := gexec.Build("github.com/flannel-dns/flannel-dns/src/flannel-launcher/config/testdata/load")
	Expect(err).NotTo(HaveOccurred())
	binary, err := os.ReadFile(built)
	Expect(err).NotTo(HaveOccurred())
	dir, err := os.MkdirTemp("", "config-load-")
	Expect(err).NotTo(HaveOccurred())
	Expect(os.Chmod(dir, 0o755)).To(Succeed())
	load := filepath.Join(dir, "load")
	Expect(os.WriteFile(load, binary, 0o755)).To(Succeed())
	return []byte(load)
}, func(path []byte) {
	loadCommand = string(path)
})

var _ = SynchronizedAfterSuite(func() {}, func() {
	gexec.CleanupBuildArtifacts()
	os.RemoveAll(filepath.Dir(loadCommand))
})
