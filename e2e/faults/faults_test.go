package faults_test

import (
	"fmt"
	"os"
	"os/user"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/flannel-dns/flannel-dns/e2e/cluster"
	"github.com/flannel-dns/flannel-dns/e2e/clustertest"
	"github.com/flannel-dns/flannel-dns/e2e/master"
	"github.com/flannel-dns/flannel-dns/e2e/pods"
	"github.com/flannel-dns/flannel-dns/e2e/worker"
)

const (
	// failoverBound proves recovery; untuned, flanneld waits on a black-holed member for about 2 h.
	failoverBound = 60 * time.Second
	// settle keeps the probes going after a fault has healed, inside the counted window.
	settle = 2 * time.Second
)

var _ = Describe("faults on a simulated CFCR cluster", Ordered, func() {
	var c *cluster.Cluster

	BeforeAll(func() { c = clustertest.Deploy(3, 2) })

	AfterEach(func() { clustertest.PrintLogsOnFailure(c) })

	It("routes a new worker's subnet soon after the member carrying worker-0's watch is black-holed", func() {
		observer := c.Workers()[0]
		expectConfined(observer.LauncherPID())
		expectConfined(observer.FlanneldPID())
		log := observer.Path(cluster.LauncherLog)
		Expect(logSince(log, 0)).To(ContainSubstring(switchedToFallback),
			"the launcher did not switch to the fallback under bpm's seccomp profile")
		info, err := os.Stat(log)
		Expect(err).NotTo(HaveOccurred())

		carrier := failover(c, "black-hole", c.BlackHole, reconnect(c))
		logged := logSince(log, info.Size())
		Expect(logged).To(ContainSubstring("Peer %s missed", carrier.Address), "the Reaper did not act on %s", carrier.Name)
		Expect(logged).NotTo(ContainSubstring("Tuned keepalive"), "the tuner acted although bpm's seccomp profile refuses pidfd_getfd")
	})

	It("routes a new worker's subnet soon after the member carrying worker-0's watch is killed", func() {
		failover(c, "sigkill", (*master.Member).Kill, c.RestartMember)
	})

	It("gives a rebooted worker its subnet back without a new lease", func() {
		before := snapshot(c)
		rebooted := c.Workers()[1]
		var untouched []*worker.Worker
		for _, w := range c.Workers() {
			if w != rebooted {
				untouched = append(untouched, w)
			}
		}
		witness := startWitness(c, untouched)
		leases := leaseCount(c)
		oldPID := before[rebooted.Name].pid

		start := time.Now()
		Expect(c.RebootWorker(rebooted)).To(Succeed())
		subnetBack := time.Since(start)
		Expect(cluster.Subnet(rebooted)).To(Equal(before[rebooted.Name].subnet))
		Expect(rebooted.FlanneldPID()).NotTo(Or(BeZero(), Equal(oldPID)), "flanneld was not started again")

		// Every pod, the rebooted worker's included, answers again: a second of probes with no loss.
		Eventually(func() bool {
			now := time.Now()
			sent, lost := c.Prober.Loss(now.Add(-2*time.Second), now.Add(-time.Second))
			return sent > 0 && lost == 0
		}).WithTimeout(failoverBound).WithPolling(250 * time.Millisecond).Should(BeTrue())
		trafficBack := time.Since(start) - time.Second
		figure(fmt.Sprintf("reboot: subnet back after %.1f s, pod traffic after %.1f s", subnetBack.Seconds(), trafficBack.Seconds()))

		Expect(leaseCount(c)).To(Equal(leases), "the reboot took a new lease")
		Expect(cluster.Routes(c.Workers()[0], before[rebooted.Name].subnet)).To(BeTrue(),
			"worker-0 no longer routes the rebooted worker's subnet")
		expectNoLoss(witness, start)
		delete(before, rebooted.Name)
		expectKept(c, before)
	})
})

// switchedToFallback begins the line launch.go logs when the kernel refuses the keepalive tuner's pidfd calls.
const switchedToFallback = "Dead etcd members: switching from keepalive tuning to ICMP echo + SOCK_DESTROY"

func reconnect(c *cluster.Cluster) func(*master.Member) error {
	return func(m *master.Member) error {
		if err := c.Reconnect(m); err != nil {
			return err
		}
		return m.WaitHealthy(2 * time.Minute)
	}
}

// expectConfined checks that pid (the launcher, flanneld) runs as bpm runs it: as vcap, with bpm.yml's two
// capabilities only and bpm's seccomp filter.
func expectConfined(pid int) {
	vcap, err := user.Lookup("vcap")
	Expect(err).NotTo(HaveOccurred())
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	Expect(err).NotTo(HaveOccurred())
	const netAdminAndRaw = "0000000000003000" // CAP_NET_ADMIN (12) and CAP_NET_RAW (13)
	Expect(string(status)).To(And(
		MatchRegexp(`(?m)^Uid:\t%s\t%s\t`, vcap.Uid, vcap.Uid),
		MatchRegexp(`(?m)^CapEff:\t%s$`, netAdminAndRaw),
		MatchRegexp(`(?m)^CapBnd:\t%s$`, netAdminAndRaw),
		MatchRegexp(`(?m)^Seccomp:\t2$`),
	), "process %d is not confined", pid)
}

// logSince is what was appended to the log at path after its first offset bytes.
func logSince(path string, offset int64) string {
	data, err := os.ReadFile(path)
	Expect(err).NotTo(HaveOccurred())
	return string(data[offset:])
}

// failover finds the member carrying worker-0's watch, prepares a new worker, applies fault to the member,
// starts the worker and measures when worker-0 routes its subnet, then heals the member. Probes among the
// workers that were there before must lose nothing, and every one of them keeps its flanneld and its subnet.
// Returns the faulted member.
func failover(c *cluster.Cluster, name string, fault, heal func(*master.Member) error) *master.Member {
	before := snapshot(c)
	observer := c.Workers()[0]
	witness := startWitness(c, c.Workers())
	carrier, err := c.WatchCarrier(observer)
	Expect(err).NotTo(HaveOccurred())
	newcomer, err := c.PrepareWorker()
	Expect(err).NotTo(HaveOccurred())

	start := time.Now()
	Expect(fault(carrier)).To(Succeed())
	f, err := c.StartDuring(newcomer, start, observer, carrier, failoverBound)
	Expect(err).NotTo(HaveOccurred())
	figure(fmt.Sprintf("failover %s: %.1f s (watch on %s; worker-0's connections to it gone after %.1f s; %s's lease in etcd after %.1f s)",
		name, f.Routed.Seconds(), carrier.Name, f.Dropped.Seconds(), newcomer.Name, f.Leased.Seconds()))
	Expect(heal(carrier)).To(Succeed())

	expectNoLoss(witness, start)
	expectKept(c, before)
	return carrier
}

type workerState struct {
	pid    int
	subnet string
}

func snapshot(c *cluster.Cluster) map[string]workerState {
	states := map[string]workerState{}
	for _, w := range c.Workers() {
		states[w.Name] = workerState{pid: w.FlanneldPID(), subnet: cluster.Subnet(w)}
		Expect(states[w.Name].pid).NotTo(BeZero(), "no flanneld on %s", w.Name)
		Expect(states[w.Name].subnet).NotTo(BeEmpty(), "no subnet on %s", w.Name)
	}
	return states
}

// expectKept checks that every worker in before runs the same flanneld with the same subnet, and that every
// worker's lease is in etcd.
func expectKept(c *cluster.Cluster, before map[string]workerState) {
	leases, err := c.Leases()
	Expect(err).NotTo(HaveOccurred())
	for _, w := range c.Workers() {
		subnet := cluster.Subnet(w)
		if was, ok := before[w.Name]; ok {
			Expect(w.FlanneldPID()).To(Equal(was.pid), "flanneld on %s restarted", w.Name)
			Expect(subnet).To(Equal(was.subnet), "subnet of %s changed", w.Name)
		}
		key, err := cluster.LeaseKey(subnet)
		Expect(err).NotTo(HaveOccurred())
		Expect(strings.Split(leases, "\n")).To(ContainElement(key), "lease of %s is gone", w.Name)
	}
}

func leaseCount(c *cluster.Cluster) int {
	leases, err := c.Leases()
	Expect(err).NotTo(HaveOccurred())
	return len(strings.Fields(leases))
}

func startWitness(c *cluster.Cluster, workers []*worker.Worker) *pods.Prober {
	witness, err := c.Witness(workers...)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(witness.Stop)
	return witness
}

// expectNoLoss lets the probes run a little longer, then counts the ones sent since start.
func expectNoLoss(witness *pods.Prober, start time.Time) {
	time.Sleep(settle)
	end := time.Now()
	time.Sleep(time.Second) // the last echoes come back
	sent, lost := witness.Loss(start, end)
	figure(fmt.Sprintf("probes among untouched workers: %d sent, %d lost", sent, lost))
	Expect(sent).To(BeNumerically(">", 0))
	Expect(lost).To(BeZero())
}

func figure(text string) {
	GinkgoWriter.Println(text)
	AddReportEntry(text, ReportEntryVisibilityAlways)
}
