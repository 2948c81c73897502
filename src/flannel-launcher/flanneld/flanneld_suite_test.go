package flanneld_test

import (
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"
)

var recordingFlanneld string

func TestFlanneld(t *testing.T) {
	RegisterFailHandler(Fail)
	// generous: two shared cores run several suites at once
	SetDefaultEventuallyTimeout(5 * time.Second)
	RunSpecs(t, "Flanneld Suite")
}

var _ = SynchronizedBeforeSuite(func() []byte {
	path, err := gexec.Build("github.com/flannel-dns/flannel-dns/src/testenv/recordingflanneld")
	Expect(err).NotTo(HaveOccurred())
	return []byte(path)
}, func(path []byte) {
	recordingFlanneld = string(path)
})

var _ = SynchronizedAfterSuite(func() {}, func() {
	gexec.CleanupBuildArtifacts()
})
