package keepalive_test

import (
	"fmt"
	"math/rand/v2"
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
	"github.com/flannel-dns/flannel-dns/src/testenv/testlog"
)

const (
	serverIP  = "198.51.100.2"
	serverIP6 = "2001:db8:1::2" // a documentation prefix, as 198.51.100.0/24 is
	otherIP   = "198.51.100.3"  // a second address of the server's, added by the specs that need it
	etcdPort  = "2379"
	otherPort = "2380"
	dropInput = "add chain inet blackhole input { type filter hook input priority 0; policy drop; }"
)

var _ = Describe("A black-holed peer", func() {
	var client, server string

	BeforeEach(func() {
		client, server = linkedNamespaces("keepalive")
	})

	// mode "dial" leaves the connections idle (keepalive probes find the silence); "talk" keeps data in flight
	// (retransmissions do, bounded by TCP_USER_TIMEOUT).
	DescribeTable("fails a tuned connection within the tuned time, while an untuned one stays open",
		func(mode string) {
			startHolder([]string{"ip", "netns", "exec", server}, "listen", serverIP+":"+etcdPort, serverIP+":"+otherPort)
			holder := startHolder([]string{"ip", "netns", "exec", client}, mode, serverIP+":"+etcdPort, serverIP+":"+otherPort)
			logger, _ := testlog.New()
			Expect(keepalive.NewTuner(openProcess(holder.Command.Process.Pid), 2379, keepalive.DefaultSettings(), logger).Cycle()).To(Equal(1))
			// A long-running flanneld's idle socket gets a probe answered every 4 s: cut anywhere in that cycle,
			// before the first probe or after it.
			time.Sleep(rand.N(2 * keepalive.DefaultSettings().Idle))

			blackHole(server)
			cut := time.Now()
			sinceSegment, sinceData := lastReceipts(client, serverIP+":"+etcdPort)

			Eventually(holder, 30*time.Second, 50*time.Millisecond).Should(
				gbytes.Say(`closed %s:%s: .*connection timed out`, serverIP, etcdPort))
			took := time.Since(cut)
			AddReportEntry("black-hole to socket error ("+mode+")", took.Round(10*time.Millisecond).String())
			fmt.Fprintf(GinkgoWriter, "black-hole to socket error (%s): %s; from the last segment received: %s; from the last data received: %s\n",
				mode, took, took+sinceSegment, took+sinceData)
			Expect(holder.Out.Contents()).NotTo(ContainSubstring("closed %s:%s", serverIP, otherPort))
		},
		Entry("idle connection", "dial"),
		Entry("data in flight", "talk"),
	)

	It("tunes a connection that was still connecting at one pass on the next pass", func() {
		startHolder([]string{"ip", "netns", "exec", server}, "listen", serverIP+":"+etcdPort)
		blackHole(server)
		command := exec.Command("ip", "netns", "exec", client, tcpholder, "dial", serverIP+":"+etcdPort)
		holder, err := gexec.Start(command, GinkgoWriter, GinkgoWriter)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { holder.Kill().Wait() })
		Eventually(func() string {
			out, _ := exec.Command("ip", "netns", "exec", client, "ss", "-Htn", "state", "syn-sent").Output()
			return string(out)
		}).Should(ContainSubstring(serverIP + ":" + etcdPort))
		logger, _ := testlog.New()
		tuner := keepalive.NewTuner(openProcess(holder.Command.Process.Pid), 2379, keepalive.DefaultSettings(), logger)

		Expect(tuner.Cycle()).To(Equal(0))
		run("ip", "netns", "exec", server, "nft", "delete table inet blackhole")
		Eventually(holder, 10*time.Second).Should(gbytes.Say("ready")) // the next SYN gets through

		Expect(tuner.Cycle()).To(Equal(1))
	})
})

// linkedNamespaces creates a client and a server network namespace joined by a veth pair (198.51.100.1 and
// serverIP, 2001:db8:1::1 and serverIP6), removed when the spec ends.
func linkedNamespaces(prefix string) (client, server string) {
	suffix := fmt.Sprintf("%d-%04x", GinkgoParallelProcess(), rand.IntN(0x10000))
	client, server = prefix+"-client-"+suffix, prefix+"-server-"+suffix
	for _, ns := range []string{client, server} {
		run("ip", "netns", "add", ns)
		DeferCleanup(run, "ip", "netns", "delete", ns) // takes the veth pair with it
		run("ip", "-n", ns, "link", "set", "lo", "up")
	}
	run("ip", "link", "add", "veth0", "netns", client, "type", "veth", "peer", "name", "veth0", "netns", server)
	run("ip", "-n", client, "address", "add", "198.51.100.1/24", "dev", "veth0")
	run("ip", "-n", server, "address", "add", serverIP+"/24", "dev", "veth0")
	// nodad: usable at once, without duplicate address detection's wait
	run("ip", "-n", client, "address", "add", "2001:db8:1::1/64", "dev", "veth0", "nodad")
	run("ip", "-n", server, "address", "add", serverIP6+"/64", "dev", "veth0", "nodad")
	run("ip", "-n", client, "link", "set", "veth0", "up")
	run("ip", "-n", server, "link", "set", "veth0", "up")
	return client, server
}

// blackHole drops everything the namespace receives, as a dead VM would: no reset, no ICMP answer.
func blackHole(ns string) {
	run("ip", "netns", "exec", ns, "nft", "add table inet blackhole")
	run("ip", "netns", "exec", ns, "nft", dropInput)
}

// lastReceipts tells how long ago the client namespace's connection to peer last received a segment, data or a
// bare ACK such as a keepalive probe's answer (ss's lastack: the kernel's rcv_tstamp, which keepalive counts
// from), and data (lastrcv).
func lastReceipts(ns, peer string) (segment, data time.Duration) {
	out, err := exec.Command("ip", "netns", "exec", ns, "ss", "-Htni", "dst", peer).CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), string(out))
	read := func(field string) time.Duration {
		match := regexp.MustCompile(field + `:(\d+)`).FindStringSubmatch(string(out))
		Expect(match).NotTo(BeNil(), string(out))
		ms, _ := strconv.Atoi(match[1])
		return time.Duration(ms) * time.Millisecond
	}
	return read("lastack"), read("lastrcv")
}

// run runs a command that must succeed.
func run(args ...string) {
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "%s: %s", strings.Join(args, " "), out)
}
