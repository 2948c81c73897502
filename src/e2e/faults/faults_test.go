package faults_test

import (
	"fmt"
	"os"
	"os/user"
	"slices"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/flannel-dns/flannel-dns/src/e2e/cluster"
	"github.com/flannel-dns/flannel-dns/src/e2e/clustertest"
	"github.com/flannel-dns/flannel-dns/src/e2e/master"
	"github.com/flannel-dns/flannel-dns/src/e2e/stemcell"
	"github.com/flannel-dns/flannel-dns/src/e2e/worker"
)

const (
	// failoverBound proves recovery; untuned, flanneld waits on a black-holed member for the stemcell's
	// keepalive (6 min idle) or tcp_retries2 (about 15 min with data in flight).
	failoverBound = 60 * time.Second
	// healthBound is how long bosh-dns may take to leave a dead master out of the alias: it asks every health
	// server each remote_health_interval (20 s), and a request gives up after request_timeout (5 s); the first
	// check may come just before the fault.
	healthBound = 2*20*time.Second + 5*time.Second
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

		carrier := failover(c, observer, "black-hole", c.BlackHole, reconnect(c), true)
		logged := logSince(log, info.Size())
		Expect(logged).To(ContainSubstring("Peer %s missed", carrier.Address), "the Reaper did not act on %s", carrier.Name)
		Expect(logged).NotTo(ContainSubstring("Tuned keepalive"), "the tuner acted although bpm's seccomp profile refuses pidfd_getfd")
	})

	It("routes a new worker's subnet soon after the member carrying worker-0's watch is killed", func() {
		// monit starts etcd again on its next cycle (10 s at most): the member leaves the alias only when a
		// heartbeat (every 30 s) wrote its VM's health meanwhile and bosh-dns checked it before the next one.
		failover(c, c.Workers()[0], "sigkill", (*master.Member).Kill, c.RestartMember, false)
	})

	// An IaaS security group that lets no ICMP through: a worker whose flanneld connected then never saw an echo
	// answered, so its Reaper judges the members by their TCP answers to its nudges alone.
	It("with ICMP dropped between the VMs, cuts no live member, and routes a new worker's subnet after the carrier is black-holed", func() {
		Expect(c.DropICMP()).To(Succeed())
		DeferCleanup(func() { Expect(c.AllowICMP()).To(Succeed()) })
		_, err := c.AddWorker()
		Expect(err).NotTo(HaveOccurred())
		workers := c.Workers()
		observer := workers[len(workers)-1]
		log := observer.Path(cluster.LauncherLog)
		Eventually(func() string { return logSince(log, 0) }).WithTimeout(30*time.Second).
			Should(ContainSubstring("ICMP echoes (filtered?): it is judged by its TCP answers alone"), "on %s", observer.Name)
		pid := observer.FlanneldPID()
		info, err := os.Stat(log)
		Expect(err).NotTo(HaveOccurred())

		time.Sleep(10 * time.Second)
		Expect(logSince(log, info.Size())).NotTo(ContainSubstring("Destroyed"), "a live member was cut on %s", observer.Name)
		Expect(observer.FlanneldPID()).To(Equal(pid))

		carrier := failover(c, observer, "black-hole, no ICMP", c.BlackHole, reconnect(c), true)
		Expect(logSince(log, info.Size())).To(ContainSubstring("Peer %s was judged by TCP alone", carrier.Address))
	})

	// A kernel without SOCK_DESTROY (trusty's 4.4; any built without CONFIG_INET_DIAG_DESTROY): the Reaper cannot
	// cut flanneld's connections to a dead member, so the launcher restarts flanneld on the healthy members.
	It("on a kernel without SOCK_DESTROY, restarts flanneld on the healthy members after the carrier is black-holed", func() {
		_, err := c.AddWorkerOn(stemcell.Kernel{Major: 4, Minor: 4})
		Expect(err).NotTo(HaveOccurred())
		workers := c.Workers()
		observer := workers[len(workers)-1]
		log := observer.Path(cluster.LauncherLog)
		Eventually(func() string { return logSince(log, 0) }).WithTimeout(30*time.Second).
			Should(ContainSubstring("is restarted without a member that dies"), "on %s", observer.Name)
		info, err := os.Stat(log)
		Expect(err).NotTo(HaveOccurred())

		carrier := failoverExpecting(c, observer, "black-hole, no SOCK_DESTROY", c.BlackHole, reconnect(c), true,
			[]string{observer.Name})
		Expect(logSince(log, info.Size())).To(ContainSubstring("Dead etcd member %s: restarting flanneld on the healthy members",
			carrier.Address))
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

// failover finds the member carrying observer's watch, prepares a new worker, applies fault to the member,
// starts the worker and measures when observer routes its subnet, then heals the member. Probes among the
// workers that were there before must lose nothing, and every one of them keeps its flanneld and its subnet.
// With mustLeave, bosh-dns on observer must leave the member out of the alias meanwhile. Returns the faulted member.
func failover(c *cluster.Cluster, observer *worker.Worker, name string, fault, heal func(*master.Member) error, mustLeave bool) *master.Member {
	return failoverExpecting(c, observer, name, fault, heal, mustLeave, nil)
}

// failoverExpecting is failover where the workers named in restarted restart their flanneld.
func failoverExpecting(c *cluster.Cluster, observer *worker.Worker, name string, fault, heal func(*master.Member) error,
	mustLeave bool, restarted []string) *master.Member {
	before := clustertest.Snapshot(c)
	witness := clustertest.StartWitness(c, c.Workers())
	carrier, err := c.WatchCarrier(observer)
	Expect(err).NotTo(HaveOccurred())
	newcomer, err := c.PrepareWorker()
	Expect(err).NotTo(HaveOccurred())

	start := time.Now()
	Expect(fault(carrier)).To(Succeed())
	leftAlias := aliasWithout(observer, carrier, start)
	f, err := c.StartDuring(newcomer, start, observer, carrier, failoverBound)
	Expect(err).NotTo(HaveOccurred())
	clustertest.Figure(fmt.Sprintf("failover %s: %.1f s (watch on %s; %s's connections to it gone after %.1f s; %s's lease in etcd after %.1f s)",
		name, f.Routed.Seconds(), carrier.Name, observer.Name, f.Dropped.Seconds(), newcomer.Name, f.Leased.Seconds()))
	left := <-leftAlias
	clustertest.Figure(fmt.Sprintf("%s: %s left the answer for %s on %s after %.1f s", name, carrier.Name, cluster.Alias, observer.Name, left.Seconds()))
	clustertest.Figure(fmt.Sprintf("%s: %s's health.json: %s", name, carrier.Name, clustertest.HealthLine(carrier.Agent.HealthSince(start), start)))
	if mustLeave {
		Expect(left).To(BeNumerically(">", 0), "bosh-dns on %s still answers %s within %s", observer.Name, carrier.Address, healthBound)
	}
	Expect(heal(carrier)).To(Succeed())
	Eventually(func() ([]string, error) {
		answer, err := cluster.AliasAnswer(observer)
		return answer.Addresses, err
	}).WithTimeout(healthBound).Should(ContainElement(carrier.Address.String()), "%s did not come back into the alias", carrier.Name)

	clustertest.ExpectNoLoss(witness, start)
	clustertest.ExpectKept(c, before, restarted...)
	return carrier
}

// aliasWithout waits, at most healthBound from since, until bosh-dns on w leaves m out of the etcd alias's answer,
// and yields how long after since that was (zero: it did not).
func aliasWithout(w *worker.Worker, m *master.Member, since time.Time) <-chan time.Duration {
	left := make(chan time.Duration, 1)
	go func() {
		for time.Since(since) < healthBound {
			answer, err := cluster.AliasAnswer(w)
			if err == nil && !slices.Contains(answer.Addresses, m.Address.String()) {
				left <- time.Since(since)
				return
			}
			time.Sleep(250 * time.Millisecond)
		}
		left <- 0
	}()
	return left
}
