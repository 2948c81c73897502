// Package clustertest sets up a simulated cluster for one Ginkgo suite: the part that every fault suite
// repeats (config from the environment, skip or fail when it is missing, deploy, destroy, log tails).
package clustertest

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/flannel-dns/flannel-dns/src/e2e/agent"
	"github.com/flannel-dns/flannel-dns/src/e2e/cluster"
	"github.com/flannel-dns/flannel-dns/src/e2e/pods"
	"github.com/flannel-dns/flannel-dns/src/e2e/worker"
)

// Deploy creates a cluster with the given masters and workers, to be called from a BeforeAll. It is
// destroyed when the container ends, and any failed spec prints the end of every log first. Without
// E2E_PACKAGES the suite skips, or fails when E2E_REQUIRED is set (as in CI).
func Deploy(masters, workers int) *cluster.Cluster {
	c := New(nil)
	_, err := c.Deploy(masters, workers)
	if err != nil {
		GinkgoWriter.Print(c.LogTails(40))
	}
	Expect(err).NotTo(HaveOccurred())
	return c
}

// New creates a cluster with nothing deployed, as Deploy does; adjust, when set, changes its config first and
// names the environment variables it found unset ("" when none was).
func New(adjust func(*cluster.Config) string) *cluster.Cluster {
	cfg, unset := cluster.ConfigFromEnv(GinkgoT().TempDir(),
		func(format string, args ...any) { GinkgoWriter.Printf(format+"\n", args...) })
	if adjust != nil {
		names := slices.DeleteFunc([]string{unset, adjust(&cfg)}, func(s string) bool { return s == "" })
		unset = strings.Join(names, " and ")
	}
	if unset != "" {
		Expect(os.Getenv("E2E_REQUIRED")).To(BeEmpty(), "%s must be set", unset)
		Skip(unset + " not set (scripts/test-e2e sets them)")
	}
	c, err := cluster.New(cfg)
	DeferCleanup(func() { Expect(c.Destroy()).To(Succeed()) })
	Expect(err).NotTo(HaveOccurred())
	return c
}

// PrintLogsOnFailure prints the end of every log of c when the current spec failed; for an AfterEach.
func PrintLogsOnFailure(c *cluster.Cluster) {
	if CurrentSpecReport().Failed() && c != nil {
		GinkgoWriter.Print(c.LogTails(40))
	}
}

// settle keeps the probes going after a fault has healed, inside the counted window.
const settle = 2 * time.Second

// WorkerState is what Snapshot keeps of a worker.
type WorkerState struct {
	PID    int
	Subnet string
}

// Snapshot is every worker's flanneld PID and subnet, which must be there.
func Snapshot(c *cluster.Cluster) map[string]WorkerState {
	states := map[string]WorkerState{}
	for _, w := range c.Workers() {
		states[w.Name] = WorkerState{PID: w.FlanneldPID(), Subnet: cluster.Subnet(w)}
		Expect(states[w.Name].PID).NotTo(BeZero(), "no flanneld on %s", w.Name)
		Expect(states[w.Name].Subnet).NotTo(BeEmpty(), "no subnet on %s", w.Name)
	}
	return states
}

// ExpectKept checks that every worker in before runs the same flanneld with the same subnet, and that every
// worker's lease is in etcd. The workers named in restarted must run a new flanneld instead, on the same subnet.
func ExpectKept(c *cluster.Cluster, before map[string]WorkerState, restarted ...string) {
	leases, err := c.Leases()
	Expect(err).NotTo(HaveOccurred())
	for _, w := range c.Workers() {
		subnet := cluster.Subnet(w)
		if was, ok := before[w.Name]; ok {
			if slices.Contains(restarted, w.Name) {
				Expect(w.FlanneldPID()).NotTo(Equal(was.PID), "flanneld on %s was not restarted", w.Name)
			} else {
				Expect(w.FlanneldPID()).To(Equal(was.PID), "flanneld on %s restarted", w.Name)
			}
			Expect(subnet).To(Equal(was.Subnet), "subnet of %s changed", w.Name)
		}
		key, err := cluster.LeaseKey(subnet)
		Expect(err).NotTo(HaveOccurred())
		Expect(strings.Split(leases, "\n")).To(ContainElement(key), "lease of %s is gone", w.Name)
	}
}

// LeaseCount is the number of leases in etcd.
func LeaseCount(c *cluster.Cluster) int {
	leases, err := c.Leases()
	Expect(err).NotTo(HaveOccurred())
	return len(strings.Fields(leases))
}

// StartWitness probes among the pods of workers until the spec ends.
func StartWitness(c *cluster.Cluster, workers []*worker.Worker) *pods.Prober {
	witness, stop, err := c.Witness(workers...)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { Expect(stop()).To(Succeed()) })
	return witness
}

// ExpectNoLoss lets the probes run a little longer, then counts the ones sent since start.
func ExpectNoLoss(witness *pods.Prober, start time.Time) {
	time.Sleep(settle)
	end := time.Now()
	time.Sleep(time.Second) // the last echoes come back
	sent, lost := witness.Loss(start, end)
	Figure(fmt.Sprintf("probes among untouched workers: %d sent, %d lost", sent, lost))
	Expect(sent).To(BeNumerically(">", 0))
	Expect(lost).To(BeZero())
}

// Figure reports a measured figure in the spec's output and in the suite's report.
func Figure(text string) {
	GinkgoWriter.Println(text)
	AddReportEntry(text, ReportEntryVisibilityAlways)
}

// HealthLine lists the writes of a VM's health.json, each with its time from start.
func HealthLine(writes []agent.Health, start time.Time) string {
	var parts []string
	for _, h := range writes {
		parts = append(parts, fmt.Sprintf("%s at %.0f s", h.State, h.At.Sub(start).Seconds()))
	}
	if len(parts) == 0 {
		return "not written"
	}
	return strings.Join(parts, ", ")
}
