package keepalive_test

import (
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"
)

var tcpholder, reaperCommand, echospoofer, etcdwatch, noipv6 string

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
	spoofer, err := gexec.Build("github.com/flannel-dns/flannel-dns/src/flannel-launcher/keepalive/testdata/echospoofer")
	Expect(err).NotTo(HaveOccurred())
	watcher, err := gexec.Build("github.com/flannel-dns/flannel-dns/src/flannel-launcher/keepalive/testdata/etcdwatch")
	Expect(err).NotTo(HaveOccurred())
	withoutIPv6, err := gexec.Build("github.com/flannel-dns/flannel-dns/src/flannel-launcher/keepalive/testdata/noipv6")
	Expect(err).NotTo(HaveOccurred())
	return []byte(strings.Join([]string{holder, reaper, spoofer, watcher, withoutIPv6}, "\n"))
}, func(paths []byte) {
	built := strings.Split(string(paths), "\n")
	tcpholder, reaperCommand, echospoofer, etcdwatch, noipv6 = built[0], built[1], built[2], built[3], built[4]
})

var _ = SynchronizedAfterSuite(func() {}, func() {
	gexec.CleanupBuildArtifacts()
})
