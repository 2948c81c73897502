package keepalive_test

import (
	"github.com/flannel-dns/flannel-dns/src/testenv/cache"

	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	"github.com/onsi/gomega/gexec"
)

var _ = Describe("Reaper beside a real etcd", func() {
	// A frozen process is not a dead member: its kernel goes on answering ICMP and acknowledging TCP.
	It("destroys nothing while the member's etcd is frozen for 1 s (SIGSTOP), and the watch goes on", func() {
		client, server := linkedNamespaces("frozen")
		etcd := startEtcd(server)
		watcher := startWatcher(client, "http://"+serverIP+":"+etcdPort)
		reaper := startReaper(client, watcher.Command.Process.Pid)
		Eventually(reaper, 10*time.Second).Should(gbytes.Say(`Peer %s answers ICMP echo`, serverIP))

		Expect(etcd.Command.Process.Signal(syscall.SIGSTOP)).To(Succeed())
		time.Sleep(time.Second)
		Expect(etcd.Command.Process.Signal(syscall.SIGCONT)).To(Succeed())
		resumed := events(watcher)

		Eventually(func() int { return events(watcher) - resumed }, 10*time.Second).Should(BeNumerically(">=", 10))
		Consistently(reaper, 3*time.Second).ShouldNot(gbytes.Say("missed"))
		Expect(reaper.Out.Contents()).NotTo(ContainSubstring("Destroyed"))
		Expect(watcher.ExitCode()).To(Equal(-1), "the watcher is still running")
		Expect(strings.Count(string(watcher.Out.Contents()), "watch closed")).To(BeNumerically("<=", 1))
	})
})

// etcdBinary is where scripts/build-etcd puts etcd 3.6: ${FLANNEL_DNS_CACHE:-/var/cache/flannel-dns}/etcd-3.6.16/etcd.
func etcdBinary() string {
	return cache.Path("etcd-3.6.16", "etcd")
}

// startEtcd runs a one-member etcd on serverIP in the namespace (plain HTTP: the Reaper does not look inside
// the connections), its own process: `ip netns exec` execs it, so the session's PID is etcd's. It is killed when
// the spec ends.
func startEtcd(ns string) *gexec.Session {
	_, err := os.Stat(etcdBinary())
	Expect(err).NotTo(HaveOccurred(), "etcd 3.6 (scripts/build-etcd puts it there)")
	peer := "http://" + serverIP + ":" + otherPort
	command := exec.Command("ip", "netns", "exec", ns, etcdBinary(), "--name", "frozen", "--data-dir", GinkgoT().TempDir(),
		"--listen-client-urls", "http://"+serverIP+":"+etcdPort, "--advertise-client-urls", "http://"+serverIP+":"+etcdPort,
		"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer, "--initial-cluster", "frozen="+peer,
		"--log-level", "warn")
	session, err := gexec.Start(command, GinkgoWriter, GinkgoWriter)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { session.Kill().Wait(10 * time.Second) })
	return session
}

// startWatcher runs etcdwatch in the namespace and waits for its first event. It is killed when the spec ends.
func startWatcher(ns, endpoint string) *gexec.Session {
	session, err := gexec.Start(exec.Command("ip", "netns", "exec", ns, etcdwatch, endpoint), GinkgoWriter, GinkgoWriter)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { session.Kill().Wait(10 * time.Second) })
	Eventually(session, 30*time.Second).Should(gbytes.Say("watching"))
	return session
}

// events counts the events the watcher has printed.
func events(watcher *gexec.Session) int {
	return strings.Count(string(watcher.Out.Contents()), "\nevent ")
}
