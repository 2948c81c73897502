package main_test

import (
	"net"
	"path/filepath"
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"

	"github.com/flannel-dns/flannel-dns/testenv/loopback"
	"github.com/flannel-dns/flannel-dns/testenv/recordingflanneld/record"
)

var _ = Describe("flannel-launcher run under a seccomp filter like bpm's", func() {
	It("switches from keepalive tuning to the ICMP echo fallback when pidfd_getfd is refused, and watches the member", func() {
		memberIP := loopback.IPs(1)[0]
		member, err := net.Listen("tcp", net.JoinHostPort(memberIP.String(), strconv.Itoa(cluster.Port)))
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(member.Close)
		recordFile := filepath.Join(GinkgoT().TempDir(), "record.json")

		session := startUnder([]string{binaries.BPMSeccomp}, recordFile, []string{record.DialEnv + "=" + member.Addr().String()},
			"run", "--config", writeConfig(newConfig()))

		Eventually(session.Err, 15*time.Second).Should(gbytes.Say(`switching from keepalive tuning to ICMP echo \+ SOCK_DESTROY ` +
			`for the rest of flanneld's life, because the kernel refused pidfd_open/pidfd_getfd .*operation not permitted`))
		Eventually(session.Err, 10*time.Second).Should(gbytes.Say(`Peer %s answers ICMP echo: pid \d+'s connections to it on port %d`,
			memberIP, cluster.Port))
		Expect(session.Err.Contents()).NotTo(ContainSubstring("Tuned keepalive"))
	})
})
