package keepalive_test

import (
	"net"
	"os"
	"strconv"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/keepalive"
	"github.com/flannel-dns/flannel-dns/src/testenv/loopback"
	"github.com/flannel-dns/flannel-dns/src/testenv/testlog"
)

var _ = Describe("A process handle", func() {
	// The Tuner and the Reaper are given flanneld when it starts; flanneld may end, and its PID go to another
	// process, while they still tick.
	It("never leads the Tuner or the Reaper to the sockets of another process that got the PID", func() {
		etcd := holdingListener(net.JoinHostPort(loopback.IPs(1)[0].String(), "0"))
		first := startHolder(nil, "dial", etcd.String())
		pid := first.Command.Process.Pid
		process := openProcess(pid)
		Eventually(first.Kill()).Should(gexec.Exit())
		startHolderAt(pid, "dial", etcd.String())
		untuned := peerOptions(pid)
		Expect(untuned[etcd.Port]).To(HaveLen(1))
		Expect(untuned[etcd.Port][0].keepalive).To(BeZero())
		logger, _ := testlog.New()

		_, err := keepalive.NewTuner(process, etcd.Port, keepalive.DefaultSettings(), logger).Cycle()
		Expect(err).To(MatchError(ContainSubstring("the process has ended")))
		Expect(peerOptions(pid)).To(Equal(untuned), "the new process's socket is untouched")

		reaper, err := keepalive.NewReaper(process, etcd.Port, logger, nil)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(reaper.Close)
		_, err = reaper.Cycle()
		Expect(err).To(MatchError(ContainSubstring("the process has ended")))
		Expect(reaper.Dumps()).To(BeZero())
	})
})

// startHolderAt starts tcpholder as startHolder does, with the PID pid: it sets the namespace's last PID just
// below (root only) and tries again should another process take it first.
func startHolderAt(pid int, mode string, addresses ...string) *gexec.Session {
	for range 50 {
		Expect(os.WriteFile("/proc/sys/kernel/ns_last_pid", []byte(strconv.Itoa(pid-1)), 0)).To(Succeed())
		session := startHolder(nil, mode, addresses...)
		if session.Command.Process.Pid == pid {
			return session
		}
		Eventually(session.Kill()).Should(gexec.Exit())
	}
	Fail("another process kept taking PID " + strconv.Itoa(pid))
	return nil
}
