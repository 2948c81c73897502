package keepalive_test

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	"github.com/onsi/gomega/gexec"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/keepalive"
	"github.com/flannel-dns/flannel-dns/src/testenv/loopback"
	"github.com/flannel-dns/flannel-dns/src/testenv/testlog"
)

var _ = Describe("Reaper in network namespaces", func() {
	var client, serverNS string
	var holder, reaper *gexec.Session

	// start has the server hold the etcd port and another, and a client process connected to both, watched by
	// a reaper running in the client's namespace as the launcher would (every 2 s).
	start := func(etcd, other string) {
		startHolder([]string{"ip", "netns", "exec", serverNS}, "listen", etcd, other)
		holder = startHolder([]string{"ip", "netns", "exec", client}, "dial", etcd, other)
		command := exec.Command("ip", "netns", "exec", client, reaperCommand, strconv.Itoa(holder.Command.Process.Pid), etcdPort)
		var err error
		reaper, err = gexec.Start(command, GinkgoWriter, GinkgoWriter)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { reaper.Terminate().Wait(10 * time.Second) })
		Eventually(reaper).Should(gbytes.Say("started"))
	}

	BeforeEach(func() {
		client, serverNS = linkedNamespaces("reaper")
	})

	DescribeTable("destroys the connection to the etcd port of a peer that answered ICMP and then went silent, and only that one",
		func(server string) {
			etcd, other := net.JoinHostPort(server, etcdPort), net.JoinHostPort(server, otherPort)
			start(etcd, other)
			Eventually(reaper, 10*time.Second).Should(gbytes.Say(`Peer %s answers ICMP echo`, server))
			time.Sleep(rand.N(2 * time.Second)) // the log comes right after a tick: cut anywhere in the next one

			blackHole(serverNS)
			cut := time.Now()

			Eventually(holder, 30*time.Second, 50*time.Millisecond).Should(
				gbytes.Say(`closed %s: .*software caused connection abort`, regexp.QuoteMeta(etcd)))
			took := time.Since(cut)
			AddReportEntry("black-hole to socket destroyed (ICMP fallback)", took.Round(10*time.Millisecond).String())
			fmt.Fprintf(GinkgoWriter, "black-hole to socket destroyed (ICMP fallback, %s): %s\n", server, took)
			Expect(reaper).To(gbytes.Say(`Peer %s missed 3 ICMP echoes in a row: destroying pid \d+'s 1 connection\(s\) to it on port %s`, server, etcdPort))
			Expect(reaper).To(gbytes.Say(`Destroyed pid \d+'s connection \S+ -> %s`, regexp.QuoteMeta(etcd)))
			Consistently(holder, 3*time.Second).ShouldNot(gbytes.Say("closed %s", regexp.QuoteMeta(other)))
		},
		Entry("IPv4", serverIP),
		Entry("IPv6", serverIP6),
	)

	// An off-path host may guess the identifier and the sequence number (32 bits); it cannot guess the random
	// payload of each echo. Here it even sees the requests and answers each one.
	DescribeTable("judges dead a silent peer whatever replies are forged in its name",
		func(forgery ...string) {
			run("ip", "-n", serverNS, "address", "add", otherIP+"/24", "dev", "veth0")
			start(serverIP+":"+etcdPort, serverIP+":"+otherPort)
			Eventually(reaper, 10*time.Second).Should(gbytes.Say(`Peer %s answers ICMP echo`, serverIP))
			forger := startSpoofer(serverNS, append([]string{serverIP}, forgery...)...)

			blackHole(serverNS)
			forgedBefore := strings.Count(string(forger.Out.Contents()), "forged")

			Eventually(holder, 30*time.Second, 50*time.Millisecond).Should(
				gbytes.Say(`closed %s:%s: .*software caused connection abort`, serverIP, etcdPort))
			Expect(strings.Count(string(forger.Out.Contents()), "forged")-forgedBefore).To(
				BeNumerically(">=", keepalive.DeadAfter), "forged replies during the silence")
		},
		Entry("replies from the peer's address without the echo's payload", "wrong-payload"),
		Entry("replies with the echo's payload from another address", "other-source", otherIP),
	)

	It("never judges dead a peer that does not answer ICMP, and says so once", func() {
		run("ip", "netns", "exec", serverNS, "nft", "add table inet noping")
		run("ip", "netns", "exec", serverNS, "nft", "add chain inet noping input { type filter hook input priority 0; }")
		run("ip", "netns", "exec", serverNS, "nft", "add rule inet noping input icmp type echo-request drop")
		start(serverIP+":"+etcdPort, serverIP+":"+otherPort)
		Eventually(reaper, 15*time.Second).Should(gbytes.Say(`Peer %s has answered none of 3 ICMP echoes`, serverIP))

		blackHole(serverNS)

		Consistently(holder, 10*time.Second).ShouldNot(gbytes.Say("closed"))
		Expect(reaper.Out.Contents()).NotTo(ContainSubstring("Destroyed"))
		Expect(strings.Count(string(reaper.Out.Contents()), "has answered none")).To(Equal(1))
	})

	It("leaves the connections to a peer that keeps answering, and sends it nothing but ICMP echoes", func() {
		start(serverIP+":"+etcdPort, serverIP+":"+otherPort)
		Eventually(reaper, 10*time.Second).Should(gbytes.Say(`Peer %s answers ICMP echo`, serverIP))
		countArrivals(serverNS)

		Consistently(holder, 15*time.Second).ShouldNot(gbytes.Say("closed"))
		Expect(reaper.Out.Contents()).NotTo(ContainSubstring("missed"))
		arrived := arrivals(serverNS)
		fmt.Fprintf(GinkgoWriter, "arrived at the peer in 15 s of steady state: %v\n", arrived)
		AddReportEntry("arrived at the peer in 15 s of steady state", fmt.Sprint(arrived))
		Expect(arrived["etcd"]).To(BeZero(), "no segment on the etcd port")
		Expect(arrived["echo"]).To(BeNumerically("~", 15/2, 2), "one echo request every 2 s")
		Expect(arrived["other"]).To(BeZero())
	})
})

var _ = Describe("Reaper", func() {
	It("dumps the socket table once, not on every tick, while the process's sockets stay the same", func() {
		etcd := holdingListener(net.JoinHostPort(loopback.IPs(1)[0].String(), "0"))
		other := holdingListener(net.JoinHostPort(etcd.IP.String(), "0"))
		holder := startHolder(nil, "dial", etcd.String(), etcd.String(), other.String())
		logger, logs := testlog.New()
		reaper, err := keepalive.NewReaper(openProcess(holder.Command.Process.Pid), etcd.Port, logger)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(reaper.Close)

		for range 5 {
			Expect(reaper.Cycle()).To(Equal(0))
			time.Sleep(20 * time.Millisecond) // the echo's answer, from loopback
		}

		Expect(reaper.Dumps()).To(Equal(1))
		Expect(logs).To(gbytes.Say(`Peer %s answers ICMP echo`, etcd.IP))
	})
})

// startSpoofer runs echospoofer in the namespace and waits until it reads the requests. It is killed when the
// spec ends.
func startSpoofer(ns string, args ...string) *gexec.Session {
	command := exec.Command("ip", append([]string{"netns", "exec", ns, echospoofer}, args...)...)
	session, err := gexec.Start(command, GinkgoWriter, GinkgoWriter)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { session.Kill().Wait() })
	Eventually(session).Should(gbytes.Say("spoofing"))
	return session
}

// countArrivals counts, from now on, the packets the namespace receives: TCP to the etcd port, ICMP echo
// requests, and anything else (except ARP, which nftables' inet family does not see).
func countArrivals(ns string) {
	run("ip", "netns", "exec", ns, "nft", "add table inet count")
	run("ip", "netns", "exec", ns, "nft", "add chain inet count input { type filter hook input priority -10; }")
	run("ip", "netns", "exec", ns, "nft", "add rule inet count input tcp dport "+etcdPort+" counter accept comment \"etcd\"")
	run("ip", "netns", "exec", ns, "nft", "add rule inet count input icmp type echo-request counter accept comment \"echo\"")
	run("ip", "netns", "exec", ns, "nft", "add rule inet count input counter comment \"other\"")
}

// arrivals reads the counters that countArrivals set up, by comment.
func arrivals(ns string) map[string]int {
	out, err := exec.Command("ip", "netns", "exec", ns, "nft", "list chain inet count input").CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), string(out))
	counts := map[string]int{}
	for _, match := range regexp.MustCompile(`counter packets (\d+) bytes \d+ .*comment "?(\w+)"?`).FindAllStringSubmatch(string(out), -1) {
		counts[match[2]], _ = strconv.Atoi(match[1])
	}
	Expect(counts).To(HaveLen(3), string(out))
	return counts
}
