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
	// answer EACCES. None of these changes while flanneld runs. Every stemcell boots with ipv6.disable=1, where no
	// AF_INET6 socket opens (noipv6): the fallback must start there too.
	DescribeTable("switches from keepalive tuning to the ICMP echo fallback when the pidfd calls are refused for good, and watches the member",
		func(errno string, getfdOnly, noIPv6 bool, message string) {
			memberIP := loopback.IPs(1)[0]
			member, err := net.Listen("tcp", net.JoinHostPort(memberIP.String(), strconv.Itoa(cluster.Port)))
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(member.Close)
			recordFile := filepath.Join(GinkgoT().TempDir(), "record.json")
			wrapper := []string{binaries.BPMSeccomp, "-errno", errno}
			if noIPv6 {
				wrapper = append([]string{binaries.NoIPv6}, wrapper...)
			}
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
			Expect(session.Err.Contents()).NotTo(ContainSubstring("the fallback cannot start"))
		},
		Entry("EPERM, as bpm's seccomp profile", "EPERM", false, false, "operation not permitted"),
		Entry("ENOSYS from pidfd_getfd, as a kernel from 5.3 to 5.5", "ENOSYS", true, false, "function not implemented"),
		Entry("EACCES", "EACCES", false, false, "permission denied"),
		Entry("EPERM from bpm's profile, on a stemcell's kernel without IPv6", "EPERM", false, true, "operation not permitted"),
		Entry("ENOSYS from both calls, as xenial's 4.15 kernel, without IPv6", "ENOSYS", false, true, "function not implemented"),
	)
})
