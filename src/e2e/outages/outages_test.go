package outages_test

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/flannel-dns/flannel-dns/src/e2e/cluster"
	"github.com/flannel-dns/flannel-dns/src/e2e/clustertest"
	"github.com/flannel-dns/flannel-dns/src/e2e/impostor"
	"github.com/flannel-dns/flannel-dns/src/e2e/procstats"
)

const (
	outage = 60 * time.Second
	// etcdOutage is how long the masters stay unreachable while a new worker starts.
	etcdOutage = 45 * time.Second
)

// impostorAddr is on the simulated network and used by no instance (masters from .10, workers from .100).
var impostorAddr = netip.MustParseAddr("192.0.2.250")

var _ = Describe("outages of a simulated CFCR cluster", Ordered, func() {
	var (
		c *cluster.Cluster
		// what every worker showed before the spec
		before map[string]cluster.WorkerState
		// the probe window: from the spec's start to end (zero: the end of the spec), before any new pod
		start, end time.Time
		// a worker whose launcher the spec restarts on purpose: its processes are new, its subnet is not
		restarted string
	)

	BeforeAll(func() { c = clustertest.Deploy(3, 2) })

	BeforeEach(func() {
		var err error
		before, err = c.WorkerStates()
		Expect(err).NotTo(HaveOccurred())
		start, end, restarted = time.Now(), time.Time{}, ""
	})

	AfterEach(func() {
		if CurrentSpecReport().Failed() {
			clustertest.PrintLogsOnFailure(c)
			return
		}
		if end.IsZero() {
			end = time.Now()
		}
		time.Sleep(time.Until(end.Add(time.Second))) // the last echoes of the window come back
		// The pods of a worker the spec updates are evicted before and made again after: what they sent or were
		// sent around that is no datagram between existing workers.
		existing := func(a, b netip.Addr) bool { return true }
		workers := len(before)
		if restarted != "" {
			updated := netip.MustParsePrefix(before[restarted].Subnet).Masked()
			existing = func(a, b netip.Addr) bool { return !updated.Contains(a) && !updated.Contains(b) }
			workers--
		}
		sent, lost, _ := c.Prober.Between(start, end, existing)
		AddReportEntry("pod probe", fmt.Sprintf("%d datagrams between the pods of %d workers over %s, %d lost",
			sent, workers, end.Sub(start).Round(time.Second), lost))
		Expect(sent).To(BeNumerically(">", 0), "the probe sent nothing")
		Expect(lost).To(BeZero(), "pod datagrams lost between existing workers")

		after, err := c.WorkerStates()
		Expect(err).NotTo(HaveOccurred())
		for name, was := range before {
			now := after[name]
			if name != restarted {
				Expect(now.LauncherPID).To(Equal(was.LauncherPID), "the launcher on %s restarted", name)
				Expect(now.FlanneldPID).To(Equal(was.FlanneldPID), "flanneld on %s restarted", name)
			}
			Expect(now.FlanneldPID).NotTo(BeZero(), "flanneld is not running on %s", name)
			Expect(now.Subnet).To(Equal(was.Subnet), "the subnet of %s changed", name)
			Expect(now.LeaseInEtcd).To(BeTrue(), "the lease of %s (%s) is not in etcd", name, now.Subnet)
		}
	})

	It("rides out the loss of etcd's quorum for a minute without restarting flanneld", func() {
		Expect(c.HaltEtcd(1, 2)).To(Succeed())
		DeferCleanup(func() { _ = c.ResumeEtcd(1, 2) }) // a no-op once resumed: etcd runs already
		_, err := c.Master(0).Etcdctl("put", "/e2e/outage", "quorum")
		Expect(err).To(HaveOccurred(), "master/0 alone still accepted a write")
		time.Sleep(outage)
		Expect(c.ResumeEtcd(1, 2)).To(Succeed())

		// flanneld on the existing workers still follows etcd: the newcomer's lease becomes a route there.
		end = time.Now()
		_, err = c.AddWorker()
		Expect(err).NotTo(HaveOccurred())
	})

	It("rides out a minute without DNS, and says so in the launcher's log", func() {
		offsets := logSizes(c)
		Expect(c.StopDNS()).To(Succeed())
		DeferCleanup(func() { _ = c.ResumeDNS() })
		time.Sleep(outage)
		Expect(c.ResumeDNS()).To(Succeed())

		for name, offset := range offsets {
			failed := linesWith(logSince(c, name, offset), "Re-resolving '"+cluster.Alias+"' failed, keeping the last answer")
			AddReportEntry("failed lookups on "+name, strings.Join(failed, "\n"))
			// the launcher re-resolves every resolve-interval (10 s by default): about six in a minute
			Expect(len(failed)).To(BeNumerically(">=", 3), "%s logged %d failed lookups", name, len(failed))
		}
		end = time.Now()
		_, err := c.AddWorker()
		Expect(err).NotTo(HaveOccurred())
	})

	It("never completes a handshake with an impostor that a spoofed DNS answer adds", func() {
		member := c.Master(0).Host()
		listener := startImpostor(c, []string{cluster.Alias, member})
		Expect(c.SpoofDNS(impostorAddr, cluster.Alias, member)).To(Succeed())
		DeferCleanup(c.RestoreDNS)

		w := c.Workers()[0]
		restarted = w.Name
		offset := logSizes(c)[w.Name]
		restartedAt := time.Now()
		// as the director updates an instance, its pods evicted first: docker's start makes cni0 anew
		Expect(c.EvictPods(w)).To(Succeed())
		Expect(c.Redeploy(w)).To(Succeed())
		Expect(c.AwaitFlanneld(w, restartedAt)).To(Succeed())
		Expect(c.ReturnPods(w)).To(Succeed())
		impostorAt := net.JoinHostPort(impostorAddr.String(), "2379")
		Expect(logSince(c, w.Name, offset)).To(ContainSubstring("Leaving out an address of '%s' whose certificate does not verify: "+
			"TLS handshake with etcd at %s", cluster.Alias, impostorAt))

		out, status, err := cluster.Check(c.Workers()[1])
		Expect(err).NotTo(HaveOccurred())
		AddReportEntry("flannel-check with a spoofed answer", fmt.Sprintf("exit status %d\n%s", status, out))
		Expect(status).To(Equal(1), out)
		Expect(out).To(ContainSubstring("TLS handshake with etcd at "+impostorAt), "check does not name the impostor")
		Expect(out).To(ContainSubstring("is not signed by the CA in etcd.ca_file"), out)

		AddReportEntry("impostor", fmt.Sprintf("%d connections accepted, %d handshakes completed; its side of the failures: %s",
			listener.Accepted(), listener.Handshakes(), strings.Join(listener.Failures(), "; ")))
		Expect(listener.Accepted()).To(BeNumerically(">", 0), "nothing connected to the impostor: the spoof was not tried")
		Expect(listener.Handshakes()).To(BeZero())

		Expect(c.RestoreDNS()).To(Succeed())
	})

	It("keeps a new worker's launcher waiting, within its backoff, while etcd is unreachable", func() {
		Expect(c.BlackHoleEtcd()).To(Succeed())
		DeferCleanup(c.RestoreEtcd)
		launched := time.Now()
		w, err := c.LaunchWorker()
		Expect(err).NotTo(HaveOccurred())
		Eventually(w.LauncherPID).WithTimeout(time.Minute).ShouldNot(BeZero(), "the launcher did not start on %s", w.Name)
		launcher := w.LauncherPID()
		for time.Since(launched) < etcdOutage {
			Expect(procstats.Running(launcher)).To(BeTrue(), "the launcher on %s exited while etcd was unreachable", w.Name)
			Expect(w.FlanneldPID()).To(BeZero(), "flanneld started on %s without etcd", w.Name)
			time.Sleep(time.Second)
		}
		Expect(c.RestoreEtcd()).To(Succeed())
		end = time.Now()
		Expect(c.AwaitWorker(w)).To(Succeed())
		Expect(procstats.Running(launcher)).To(BeTrue())
		Expect(w.LauncherPID()).To(Equal(launcher))

		log, err := os.ReadFile(w.Path(cluster.LauncherLog))
		Expect(err).NotTo(HaveOccurred())
		retries, err := parseRetries(string(log))
		Expect(err).NotTo(HaveOccurred())
		backoff, err := readBackoff(w.Path(cluster.LauncherConfig))
		Expect(err).NotTo(HaveOccurred())
		AddReportEntry("retries on "+w.Name, describeRetries(retries, backoff))
		Expect(len(retries)).To(BeNumerically(">=", 5), "expected a retry line per attempt over %s", etcdOutage)
		for _, r := range retries {
			Expect(r.cause).To(ContainSubstring("no etcd member answered at the addresses of '"+cluster.Alias+"'"), r.line)
		}
		Expect(backoff.violations(retries)).To(BeEmpty())
	})
})

// startImpostor attaches a host at impostorAddr listening on the etcd client port, with a certificate for
// names from a CA of its own; the spec's cleanup removes it.
func startImpostor(c *cluster.Cluster, names []string) *impostor.Listener {
	host, err := c.AddStranger("impostor", impostorAddr)
	DeferCleanup(func() { Expect(c.RemoveStranger("impostor")).To(Succeed()) })
	Expect(err).NotTo(HaveOccurred())
	listener, err := impostor.Start(host.Namespace, netip.AddrPortFrom(impostorAddr, 2379), names, GinkgoT().TempDir())
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(listener.Close)
	return listener
}

// logSizes is how long each worker's launcher log is now, by worker name.
func logSizes(c *cluster.Cluster) map[string]int64 {
	sizes := map[string]int64{}
	for _, w := range c.Workers() {
		info, err := os.Stat(w.Path(cluster.LauncherLog))
		Expect(err).NotTo(HaveOccurred())
		sizes[w.Name] = info.Size()
	}
	return sizes
}

// logSince is what the launcher of the worker called name logged after offset.
func logSince(c *cluster.Cluster, name string, offset int64) string {
	for _, w := range c.Workers() {
		if w.Name == name {
			data, err := os.ReadFile(w.Path(cluster.LauncherLog))
			Expect(err).NotTo(HaveOccurred())
			return string(data[offset:])
		}
	}
	Fail("no worker " + name)
	return ""
}

func linesWith(text, substring string) []string {
	var found []string
	for _, line := range strings.Split(text, "\n") {
		if strings.Contains(line, substring) {
			found = append(found, line)
		}
	}
	return found
}
