package main_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"
)

var binary string

func TestCheckFinalRelease(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "check-final-release Suite")
}

var _ = BeforeSuite(func() {
	var err error
	binary, err = gexec.Build("github.com/flannel-dns/flannel-dns/src/finalrelease/cmd/check-final-release")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(gexec.CleanupBuildArtifacts)
})
