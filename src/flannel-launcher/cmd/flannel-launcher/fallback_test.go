package main_test

import (
	"net"
	"path/filepath"
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"

	"github.com/flannel-dns/flannel-dns/src/testenv/loopback"
	"github.com/flannel-dns/flannel-dns/src/testenv/recordingflanneld/record"
)

var _ = Describe("flannel-launcher run under a seccomp filter like bpm's", func() {
	// bpm's profile refuses both calls with EPERM; a kernel before 5.6 has no pidfd_getfd (ENOSYS), and an LSM may
	// answer EACCES. None of these changes while flanneld runs.
	DescribeTable("switches from keepalive tuning to the ICMP echo fallback when the pidfd calls are refused for good, and watches the member",
		func(errno string, getfdOnly bool, message string) {
			memberIP := loopback.IPs(1)[0]
			member, err := net.Listen("tcp", net.JoinHostPort(memberIP.String(), strconv.Itoa(cluster.Port)))
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(member.Close)
			recordFile := filepath.Join(GinkgoT().TempDir(), "record.json")
			wrapper := []string{binaries.BPMSeccomp, "-errno", errno}
			if getfdOnly {
				wrapper = append(wrapper, "-getfd-only")
			}

			session := startUnder(wrapper, recordFile, []string{record.DialEnv + "=" + member.Addr().String()},
				"run", "--config", writeConfig(newConfig()))

			Eventually(session.Err, 15*time.Second).Should(gbytes.Say(`switching from keepalive tuning to ICMP echo \+ SOCK_DESTROY ` +
				`for the rest of flanneld's life, because the kernel refused pidfd_open/pidfd_getfd .*` + message))
			Eventually(session.Err, 10*time.Second).Should(gbytes.Say(`Peer %s answers ICMP echo: pid \d+'s connections to it on port %d`,
				memberIP, cluster.Port))
			Expect(session.Err.Contents()).NotTo(ContainSubstring("Tuned keepalive"))
			Expect(session.Err.Contents()).NotTo(ContainSubstring("failed, retrying"))
		},
		Entry("EPERM, as bpm's seccomp profile", "EPERM", false, "operation not permitted"),
		Entry("ENOSYS from pidfd_getfd, as a kernel from 5.3 to 5.5", "ENOSYS", true, "function not implemented"),
		Entry("EACCES", "EACCES", false, "permission denied"),
	)
})
