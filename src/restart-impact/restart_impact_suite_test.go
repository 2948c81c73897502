package main_test

import (
	"path/filepath"
	"runtime"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"
)

func TestRestartImpact(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "restart-impact Suite")
}

var (
	binary   string
	repoRoot string
)

var _ = BeforeSuite(func() {
	_, here, _, _ := runtime.Caller(0)
	repoRoot = filepath.Join(filepath.Dir(here), "..", "..")
	var err error
	binary, err = gexec.Build("github.com/flannel-dns/flannel-dns/src/restart-impact")
	Expect(err).NotTo(HaveOccurred())
})

var _ = AfterSuite(func() {
	gexec.CleanupBuildArtifacts()
})
