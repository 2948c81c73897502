package main_test

import (
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"
)

func TestSubnetPublisher(t *testing.T) {
	RegisterFailHandler(Fail)
	// generous: two shared cores run several suites at once
	SetDefaultEventuallyTimeout(5 * time.Second)
	RunSpecs(t, "subnet-publisher Suite")
}

var binary string

var _ = SynchronizedBeforeSuite(func() []byte {
	path, err := gexec.Build("github.com/flannel-dns/flannel-dns/src/flannel-launcher/cmd/subnet-publisher", "-race")
	Expect(err).NotTo(HaveOccurred())
	return []byte(path)
}, func(path []byte) {
	binary = string(path)
})

var _ = SynchronizedAfterSuite(func() {}, func() {
	gexec.CleanupBuildArtifacts()
})
