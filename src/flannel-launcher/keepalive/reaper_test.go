package keepalive_test

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
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

	// start has the server hold (mode "listen") or echo ("echo") the etcd port and another, and a client process
	// connected to both, idle ("dial") or exchanging a byte every 50 ms ("exchange"), watched by a reaper running
	// in the client's namespace as the launcher would; then waits until the reaper has heard the server answer.
	start := func(serverMode, clientMode, server string) {
		etcd, other := net.JoinHostPort(server, etcdPort), net.JoinHostPort(server, otherPort)
		startHolder([]string{"ip", "netns", "exec", serverNS}, serverMode, etcd, other)
		holder = startHolder([]string{"ip", "netns", "exec", client}, clientMode, etcd, other)
		reaper = startReaper(client, holder.Command.Process.Pid)
		Eventually(reaper, 10*time.Second).Should(gbytes.Say(`Peer %s answers ICMP echo`, server))
	}

	BeforeEach(func() {
		client, serverNS = linkedNamespaces("reaper")
	})

	// The verdict takes DeadAfter ticks after the first lost echo, which goes out within a tick of the cut:
	// 1.5 to 2 s. The bound leaves room for a loaded machine; the figures go to the report.
	DescribeTable("destroys the connection to the etcd port of a peer that answered ICMP and then went silent, soon, and only that one",
		func(server, serverMode, clientMode string) {
			etcd, other := net.JoinHostPort(server, etcdPort), net.JoinHostPort(server, otherPort)
			start(serverMode, clientMode, server)
			time.Sleep(rand.N(keepalive.ReaperTick)) // the log comes right after a tick: cut anywhere in the next one

			blackHole(serverNS)
			cut := time.Now()

			Eventually(holder, 30*time.Second, 20*time.Millisecond).Should(
				gbytes.Say(`closed %s: .*software caused connection abort`, regexp.QuoteMeta(etcd)))
			took := time.Since(cut)
			AddReportEntry("black-hole to socket destroyed (ICMP fallback, "+clientMode+")", took.Round(10*time.Millisecond).String())
			fmt.Fprintf(GinkgoWriter, "black-hole to socket destroyed (ICMP fallback, %s, %s): %s\n", server, clientMode, took)
			Expect(took).To(BeNumerically("<", 5*time.Second))
			Expect(reaper).To(gbytes.Say(`Peer %s missed 3 ICMP echoes in a row and pid \d+'s 1 connection\(s\) to it on port %s `+
				`received no ACK since the first \(last ACK \S+ ago`, server, etcdPort))
			// The reaper logs the destruction after the kernel has aborted the socket, which the holder may
			// report first: two processes' outputs, in no order.
			Eventually(reaper, 5*time.Second).Should(gbytes.Say(`Destroyed pid \d+'s connection \S+ -> %s`, regexp.QuoteMeta(etcd)))
			Consistently(holder, 3*time.Second).ShouldNot(gbytes.Say("closed %s", regexp.QuoteMeta(other)))
		},
		Entry("IPv4, idle", serverIP, "listen", "dial"),
		Entry("IPv6, idle", serverIP6, "listen", "dial"),
		Entry("IPv4, exchanging every 50 ms", serverIP, "echo", "exchange"),
	)

	// The case: a firewall or security-group change, an ICMP rate limit. The old verdict, on echoes
	// alone, destroyed the connection 6 to 8 s later, and every reconnection after it.
	DescribeTable("never destroys a connection to a peer that stops answering ICMP while its TCP answers",
		func(serverMode, clientMode string) {
			start(serverMode, clientMode, serverIP)
			countNudges(serverNS)

			run("ip", "netns", "exec", serverNS, "sysctl", "-qw", "net.ipv4.icmp_echo_ignore_all=1")

			Consistently(holder, 10*time.Second).ShouldNot(gbytes.Say("closed"))
			Expect(reaper.Out.Contents()).NotTo(ContainSubstring("Destroyed"))
			Expect(reaper).To(gbytes.Say(`Peer %s missed \d+ ICMP echo\(es\) but .* received an ACK since`, serverIP),
				"the echoes went unanswered")
			nudged := nudges(serverNS)
			fmt.Fprintf(GinkgoWriter, "SYNs that nudged the peer (%s) in 10+ s without ICMP: %d\n", clientMode, nudged)
			AddReportEntry("nudges in 10+ s without ICMP ("+clientMode+")", fmt.Sprint(nudged))
		},
		Entry("idle: the Reaper's nudges make the peer's kernel answer", "listen", "dial"),
		Entry("exchanging every 50 ms, as in the issue", "echo", "exchange"),
	)

	// An off-path host may guess the identifier and the sequence number (32 bits); it cannot guess the random
	// payload of each echo. Here it even sees the requests and answers each one.
	DescribeTable("judges dead a silent peer whatever replies are forged in its name",
		func(forgery ...string) {
			run("ip", "-n", serverNS, "address", "add", otherIP+"/24", "dev", "veth0")
			start("listen", "dial", serverIP)
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

	// No netem in this kernel (CONFIG_NET_SCH_NETEM is off): nftables drops 5 % of the packets at random, each
	// way. KEEPALIVE_LOSS_DURATION (a Go duration, 60s unless set) runs it longer by hand.
	It("destroys nothing on a link that loses 5 % of its packets while traffic flows", func() {
		duration := 60 * time.Second
		if set := os.Getenv("KEEPALIVE_LOSS_DURATION"); set != "" {
			var err error
			duration, err = time.ParseDuration(set)
			Expect(err).NotTo(HaveOccurred(), "KEEPALIVE_LOSS_DURATION")
		}
		start("echo", "exchange", serverIP)

		loseRandomly(serverNS, 5)

		Consistently(holder, duration).ShouldNot(gbytes.Say("closed"))
		Expect(reaper.Out.Contents()).NotTo(ContainSubstring("Destroyed"))
		dropped := lost(serverNS)
		cleared := strings.Count(string(reaper.Out.Contents()), "alive by TCP after")
		fmt.Fprintf(GinkgoWriter, "5 %% loss for %s: %v packets dropped; ticks where missed echoes were cleared by TCP: %d\n",
			duration, dropped, cleared)
		AddReportEntry("5 % loss for "+duration.String(), fmt.Sprintf("dropped %v, cleared by TCP %d", dropped, cleared))
		// About one echo in ten is lost each way together: 0 in 120 ticks would be a chance of 1 in 200,000.
		Expect(cleared).To(BeNumerically(">", 0), "no echo was missed: the loss did not reach the Reaper")
	})

	// The loop: the old Reaper kept a peer's miss count while flanneld held any connection to it, so it
	// destroyed each reconnection on the next tick, indefinitely.
	It("starts afresh with a peer whose connections were replaced", func() {
		start("echo", "exchange", serverIP)
		blackHole(serverNS)
		Eventually(holder, 10*time.Second).Should(gbytes.Say(`closed %s:%s: .*software caused connection abort`, serverIP, etcdPort))

		run("ip", "netns", "exec", serverNS, "sysctl", "-qw", "net.ipv4.icmp_echo_ignore_all=1")
		run("ip", "netns", "exec", serverNS, "nft", "delete table inet blackhole")
		Eventually(holder, 10*time.Second).Should(gbytes.Say(`connected \S+ %s:%s`, serverIP, etcdPort))

		Consistently(holder, 10*time.Second).ShouldNot(gbytes.Say("closed"))
		Expect(strings.Count(string(reaper.Out.Contents()), "Destroyed")).To(Equal(1))
	})

	// The kernel refuses SOCK_DESTROY with EOPNOTSUPP when built without CONFIG_INET_DIAG_DESTROY, and with EPERM
	// to a process without CAP_NET_ADMIN; this kernel has it, so the reaper runs here without the capability.
	It("says once that a dead peer's connections cannot be destroyed when the kernel refuses, and touches nothing", func() {
		etcd, other := net.JoinHostPort(serverIP, etcdPort), net.JoinHostPort(serverIP, otherPort)
		startHolder([]string{"ip", "netns", "exec", serverNS}, "listen", etcd, other)
		holder = startHolder([]string{"ip", "netns", "exec", client}, "dial", etcd, other)
		reaper = startReaper(client, holder.Command.Process.Pid, "setpriv", "--bounding-set=-net_admin", "--inh-caps=-net_admin")
		Expect(string(reaper.Out.Contents())).To(MatchRegexp(`ERROR - Dead etcd members: the kernel destroys no socket here, `+
			`so pid %d's connections to a dead member will keep the kernel's timeouts: .*operation not permitted`,
			holder.Command.Process.Pid), "said at start")
		Eventually(reaper, 10*time.Second).Should(gbytes.Say(`Peer %s answers ICMP echo`, serverIP))

		blackHole(serverNS)

		Eventually(reaper, 10*time.Second).Should(gbytes.Say(`ERROR - Peer %s is dead but its connections cannot be destroyed, `+
			`they keep the kernel's timeouts: Destroying the TCP connection \S+ -> %s \(SOCK_DESTROY\): the kernel destroys no `+
			`socket for this process .*: operation not permitted`, serverIP, regexp.QuoteMeta(etcd)))
		Consistently(holder, 3*time.Second).ShouldNot(gbytes.Say("closed"))
		Expect(strings.Count(string(reaper.Out.Contents()), "cannot be destroyed")).To(Equal(1))
		Expect(reaper.Out.Contents()).NotTo(ContainSubstring("Watching pid"), "the refusal was retried as a failure")
	})

	It("hands a dead peer to its caller when the kernel refuses to destroy the connections, and touches nothing", func() {
		etcd := net.JoinHostPort(serverIP, etcdPort)
		startHolder([]string{"ip", "netns", "exec", serverNS}, "listen", etcd)
		holder = startHolder([]string{"ip", "netns", "exec", client}, "dial", etcd)
		reaper = startLeavingReaper(client, holder.Command.Process.Pid, "setpriv", "--bounding-set=-net_admin", "--inh-caps=-net_admin")
		Expect(string(reaper.Out.Contents())).To(MatchRegexp(`WARN - Dead etcd members: the kernel destroys no socket here, `+
			`so pid %d is restarted without a member that dies: .*operation not permitted`, holder.Command.Process.Pid))
		Eventually(reaper, 10*time.Second).Should(gbytes.Say(`Peer %s answers ICMP echo`, serverIP))

		blackHole(serverNS)

		Eventually(reaper, 10*time.Second).Should(gbytes.Say(`Peer %s is dead and its connections cannot be destroyed .*: `+
			`leaving it by restarting pid %d`, serverIP, holder.Command.Process.Pid))
		Expect(reaper).To(gbytes.Say(`(?m)^leave %s$`, serverIP))
		Consistently(holder, 3*time.Second).ShouldNot(gbytes.Say("closed"))
		Expect(strings.Count(string(reaper.Out.Contents()), "\nleave ")).To(Equal(1), "left more than once")
	})

	// An IaaS security group without ICMP between the VMs: the echoes never come back, and the Reaper judges
	// the peer by its kernel's answers to the nudges alone (DeadAfterTCPOnly).
	Describe("with the peer's ICMP filtered from the start", func() {
		startFiltered := func(serverMode, clientMode string) {
			run("ip", "netns", "exec", serverNS, "nft", "add table inet noping")
			run("ip", "netns", "exec", serverNS, "nft", "add chain inet noping input { type filter hook input priority 0; }")
			run("ip", "netns", "exec", serverNS, "nft", "add rule inet noping input icmp type echo-request drop")
			startHolder([]string{"ip", "netns", "exec", serverNS}, serverMode, serverIP+":"+etcdPort, serverIP+":"+otherPort)
			holder = startHolder([]string{"ip", "netns", "exec", client}, clientMode, serverIP+":"+etcdPort, serverIP+":"+otherPort)
			reaper = startReaper(client, holder.Command.Process.Pid)
			// The first nudge is answered before the third echo is missed: two lines in either order.
			logged := func() string { return string(reaper.Out.Contents()) }
			Eventually(logged, 15*time.Second).Should(SatisfyAll(
				MatchRegexp(`Peer %s has answered none of 3 ICMP echoes \(filtered\?\): it is judged by its TCP answers alone`, serverIP),
				MatchRegexp(`Peer %s missed \d+ ICMP echo\(es\) but .* received an ACK since`, serverIP)))
		}

		// Seven nudges unanswered in a row, from the first lost echo: 3.5 to 4 s. The bound leaves room for a
		// loaded machine; the figures go to the report.
		DescribeTable("destroys the connection to a peer whose kernel answered nudges and then went silent, and says it judged by TCP alone",
			func(serverMode, clientMode string) {
				startFiltered(serverMode, clientMode)
				time.Sleep(rand.N(keepalive.ReaperTick))

				blackHole(serverNS)
				cut := time.Now()

				Eventually(holder, 30*time.Second, 20*time.Millisecond).Should(
					gbytes.Say(`closed %s:%s: .*software caused connection abort`, serverIP, etcdPort))
				took := time.Since(cut)
				AddReportEntry("black-hole to socket destroyed (TCP alone, "+clientMode+")", took.Round(10*time.Millisecond).String())
				fmt.Fprintf(GinkgoWriter, "black-hole to socket destroyed (TCP alone, %s): %s\n", clientMode, took)
				Expect(took).To(BeNumerically("<", 10*time.Second))
				Eventually(reaper, 5*time.Second).Should(gbytes.Say(`Peer %s was judged by TCP alone`, serverIP))
				Consistently(holder, 2*time.Second).ShouldNot(gbytes.Say("closed %s:%s", serverIP, otherPort))
				Expect(strings.Count(string(reaper.Out.Contents()), "has answered none")).To(Equal(1))
			},
			Entry("idle", "listen", "dial"),
			Entry("exchanging every 50 ms", "echo", "exchange"),
		)

		It("destroys nothing while its kernel answers, also on a link that loses 5 % of its packets", func() {
			startFiltered("listen", "dial")
			loseRandomly(serverNS, 5)
			countNudges(serverNS)

			Consistently(holder, 30*time.Second).ShouldNot(gbytes.Say("closed"))
			Expect(reaper.Out.Contents()).NotTo(ContainSubstring("Destroyed"))
			nudged, dropped := nudges(serverNS), lost(serverNS)
			fmt.Fprintf(GinkgoWriter, "ICMP filtered, 5 %% loss for 30 s: %d nudges, %v packets dropped\n", nudged, dropped)
			AddReportEntry("ICMP filtered, 5 % loss for 30 s", fmt.Sprintf("nudges %d, dropped %v", nudged, dropped))
			Expect(nudged).To(BeNumerically(">", 10), "the peer was not judged by its answers to nudges")
		})
	})

	It("leaves the connections to a peer that keeps answering, and sends it nothing but ICMP echoes", func() {
		start("listen", "dial", serverIP)
		countArrivals(serverNS)

		Consistently(holder, 15*time.Second).ShouldNot(gbytes.Say("closed"))
		Expect(reaper.Out.Contents()).NotTo(ContainSubstring("missed"))
		arrived := arrivals(serverNS)
		fmt.Fprintf(GinkgoWriter, "arrived at the peer in 15 s of steady state: %v\n", arrived)
		AddReportEntry("arrived at the peer in 15 s of steady state", fmt.Sprint(arrived))
		Expect(arrived["etcd"]).To(BeZero(), "no segment on the etcd port")
		Expect(arrived["echo"]).To(BeNumerically("~", 15*time.Second/keepalive.ReaperTick, 3), "one echo request a tick")
		Expect(arrived["other"]).To(BeZero())
	})
})

var _ = Describe("Reaper", func() {
	It("dumps the socket table once, not on every tick, while the process's sockets stay the same", func() {
		etcd := holdingListener(net.JoinHostPort(loopback.IPs(1)[0].String(), "0"))
		other := holdingListener(net.JoinHostPort(etcd.IP.String(), "0"))
		holder := startHolder(nil, "dial", etcd.String(), etcd.String(), other.String())
		logger, logs := testlog.New()
		reaper, err := keepalive.NewReaper(openProcess(holder.Command.Process.Pid), etcd.Port, logger, nil)
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

// startReaper runs the reaper in the namespace (through a wrapper such as noipv6, if given), watching pid's
// connections to the etcd port. It is stopped when the spec ends.
func startReaper(ns string, pid int, through ...string) *gexec.Session {
	return reaperWith(ns, pid, through)
}

// startLeavingReaper is startReaper with -leave: a dead peer that cannot be left by destroying sockets is printed.
func startLeavingReaper(ns string, pid int, through ...string) *gexec.Session {
	return reaperWith(ns, pid, through, "-leave")
}

func reaperWith(ns string, pid int, through []string, flags ...string) *gexec.Session {
	args := append(append([]string{"netns", "exec", ns}, through...), reaperCommand, strconv.Itoa(pid), etcdPort)
	args = append(args, flags...)
	command := exec.Command("ip", args...)
	session, err := gexec.Start(command, GinkgoWriter, GinkgoWriter)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { session.Terminate().Wait(10 * time.Second) })
	Eventually(session).Should(gbytes.Say("started"))
	return session
}

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
	counts := counters(ns, "chain inet count input", `counter packets (\d+) bytes \d+ .*comment "?(\w+)"?`)
	Expect(counts).To(HaveLen(3))
	return counts
}

// countNudges counts, from now on, the SYNs the namespace receives on the etcd port.
func countNudges(ns string) {
	run("ip", "netns", "exec", ns, "nft", "add table inet nudges")
	run("ip", "netns", "exec", ns, "nft", "add chain inet nudges input { type filter hook input priority -10; }")
	run("ip", "netns", "exec", ns, "nft", "add rule inet nudges input tcp dport "+etcdPort+" tcp flags syn counter")
}

func nudges(ns string) int {
	return counters(ns, "chain inet nudges input", `counter packets (\d+) bytes \d+()`)[""]
}

// loseRandomly drops percent of the packets the namespace receives and sends, at random.
func loseRandomly(ns string, percent int) {
	run("ip", "netns", "exec", ns, "nft", "add table inet loss")
	for _, hook := range []string{"input", "output"} {
		run("ip", "netns", "exec", ns, "nft", "add chain inet loss "+hook+" { type filter hook "+hook+" priority 0; }")
		run("ip", "netns", "exec", ns, "nft", fmt.Sprintf(`add rule inet loss %s numgen random mod 100 < %d counter drop comment "%s"`,
			hook, percent, map[string]string{"input": "in", "output": "out"}[hook]))
	}
}

// lost reads what loseRandomly dropped, each way.
func lost(ns string) map[string]int {
	return counters(ns, "table inet loss", `counter packets (\d+) bytes \d+ drop comment "(\w+)"`)
}

// counters lists what nft shows of the named chain or table and reads each counter the pattern matches: its
// first group is the packet count, its second the key.
func counters(ns, what, pattern string) map[string]int {
	out, err := exec.Command("ip", append([]string{"netns", "exec", ns, "nft", "list"}, strings.Fields(what)...)...).CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), string(out))
	counts := map[string]int{}
	for _, match := range regexp.MustCompile(pattern).FindAllStringSubmatch(string(out), -1) {
		counts[match[2]], _ = strconv.Atoi(match[1])
	}
	Expect(counts).NotTo(BeEmpty(), string(out))
	return counts
}
