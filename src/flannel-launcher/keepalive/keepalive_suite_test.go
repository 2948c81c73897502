package keepalive_test

import (
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"
)

var tcpholder, reaperCommand string

func TestKeepalive(t *testing.T) {
	RegisterFailHandler(Fail)
	// generous: two shared cores run several suites at once
	SetDefaultEventuallyTimeout(5 * time.Second)
	RunSpecs(t, "Keepalive Suite")
}

var _ = SynchronizedBeforeSuite(func() []byte {
	holder, err := gexec.Build("github.com/flannel-dns/flannel-dns/src/flannel-launcher/keepalive/testdata/tcpholder")
	Expect(err).NotTo(HaveOccurred())
	reaper, err := gexec.Build("github.com/flannel-dns/flannel-dns/src/flannel-launcher/keepalive/testdata/reaper", "-race")
	Expect(err).NotTo(HaveOccurred())
	return []byte(holder + "\n" + reaper)
}, func(paths []byte) {
	tcpholder, reaperCommand, _ = strings.Cut(string(paths), "\n")
})

var _ = SynchronizedAfterSuite(func() {}, func() {
	gexec.CleanupBuildArtifacts()
})
