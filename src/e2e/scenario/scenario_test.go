package scenario_test

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/flannel-dns/flannel-dns/src/e2e/cluster"
	"github.com/flannel-dns/flannel-dns/src/e2e/scenario"
	"github.com/flannel-dns/flannel-dns/src/e2e/timeline"
)

var _ = Describe("scaling the masters of a simulated CFCR cluster", func() {
	It("updates no worker, keeps every flanneld and its subnet, and loses no pod traffic", func() {
		cfg, unset := cluster.ConfigFromEnv(GinkgoT().TempDir(),
			func(format string, args ...any) { GinkgoWriter.Printf(format+"\n", args...) })
		if unset != "" {
			Expect(os.Getenv("E2E_REQUIRED")).To(BeEmpty(), "%s must be set", unset)
			Skip(unset + " not set (scripts/test-e2e sets them)")
		}
		c, err := cluster.New(cfg)
		DeferCleanup(func() { Expect(c.Destroy()).To(Succeed()) })
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() {
			if CurrentSpecReport().Failed() {
				GinkgoWriter.Print(c.LogTails(40))
			}
		})

		steps, err := scenario.Run(c, scenario.Full, 3*time.Second, func(s scenario.Step) { GinkgoWriter.Println(scenario.Progress(s)) })
		var table strings.Builder
		Expect(scenario.WriteTable(&table, steps)).To(Succeed())
		AddReportEntry("scenario", table.String())
		Expect(err).NotTo(HaveOccurred(), table.String())

		Expect(scenario.Violations(steps)).To(BeEmpty(), table.String())
		Expect(scenario.KuboContrast(steps)).To(BeEmpty(), table.String())
		Expect(steps[len(steps)-1].Workers).To(HaveLen(3))

		buckets := c.Prober.Buckets(steps[len(steps)-1].End)
		sent := 0
		for _, b := range buckets {
			sent += b.Sent
			if b.RTTMax > 0 {
				Expect(b.RTTMin).To(BeNumerically(">", 0))
				Expect(b.RTTMin).To(BeNumerically("<=", b.RTTMedian))
				Expect(b.RTTMedian).To(BeNumerically("<=", b.RTTMax))
			}
		}
		stepsSent := 0
		for _, s := range steps {
			stepsSent += s.Sent
		}
		Expect(sent).To(BeNumerically(">=", stepsSent), "the buckets count every datagram of the steps' windows")
		reportCrossWorker(c, steps)
		Expect(timeline.WritePNG(filepath.Join(GinkgoT().TempDir(), "timeline.png"), scenario.Timeline(steps, buckets))).To(Succeed())
	})
})

// reportCrossWorker reports, for each master step, the probes between pods on different workers (over vxlan):
// sent, lost and their round-trip times. Figures, not asserted (Violations checks the loss of every probe).
func reportCrossWorker(c *cluster.Cluster, steps []scenario.Step) {
	workerOf := map[netip.Addr]string{}
	for _, w := range c.Workers() {
		for _, p := range c.Pods(w) {
			workerOf[p.Address] = w.Name
		}
	}
	cross := func(a, b netip.Addr) bool { return workerOf[a] != workerOf[b] }
	for _, s := range steps {
		if !s.MasterStep {
			continue
		}
		sent, lost, rtts := c.Prober.Between(s.Start, s.End, cross)
		slices.Sort(rtts)
		text := fmt.Sprintf("%s: cross-worker probes %d sent, %d lost", s.Name, sent, lost)
		if len(rtts) > 0 {
			text += fmt.Sprintf(", RTT median %s, p99 %s, max %s", rtts[len(rtts)/2].Round(time.Microsecond),
				rtts[len(rtts)*99/100].Round(time.Microsecond), rtts[len(rtts)-1].Round(time.Microsecond))
		}
		GinkgoWriter.Println(text)
		AddReportEntry(text, ReportEntryVisibilityAlways)
	}
}
