package upgrade_test

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/flannel-dns/flannel-dns/src/e2e/cluster"
	"github.com/flannel-dns/flannel-dns/src/e2e/clustertest"
	"github.com/flannel-dns/flannel-dns/src/e2e/upgrade"
)

// Three workers: while one is updated, the pods of two others are probed.
var plan = upgrade.Plan{Masters: 1, Workers: 3, Settle: 3 * time.Second}

var _ = Describe("Upgrading from the newest final release to the next", Ordered, func() {
	var (
		c   *cluster.Cluster
		res upgrade.Result
	)

	BeforeAll(func() {
		c = clustertest.New(cluster.UpgradeFrom(os.Getenv("E2E_UPGRADE")))
		var err error
		res, err = upgrade.Run(c, plan, func(s upgrade.Step) { GinkgoWriter.Println(upgrade.Progress(s)) })
		var table bytes.Buffer
		Expect(upgrade.WriteTable(&table, res)).To(Succeed())
		clustertest.Figure(table.String())
		if err != nil {
			GinkgoWriter.Print(c.LogTails(40))
		}
		Expect(err).NotTo(HaveOccurred())
	})
	AfterEach(func() { clustertest.PrintLogsOnFailure(c) })

	It("rolls every instance that runs flanneld, masters first, then workers one at a time, the canary first", func() {
		var names []string
		for _, s := range res.Roll {
			names = append(names, s.Name)
		}
		Expect(names).To(Equal([]string{"update master/0", "update worker/0", "update worker/1", "update worker/2"}))
	})

	It("runs the final release's launcher everywhere before, and the next release's everywhere after", func() {
		before := res.Start.Versions["worker/0"]
		Expect(before).To(HavePrefix("src-"))
		for name, v := range res.Start.Versions {
			Expect(v).To(Equal(before), "%s on the final release", name)
		}
		last := res.Roll[len(res.Roll)-1]
		for name, v := range last.Versions {
			Expect(v).To(HavePrefix("src-"), "%s after the upgrade", name)
			Expect(v).NotTo(Equal(before), "%s still runs the final release's launcher", name)
		}
	})

	It("keeps every node's subnet at every step", func() {
		for _, s := range res.Roll {
			Expect(upgrade.Changed(res.Start, s)).To(BeEmpty(), "after %s", s.Name)
		}
	})

	It("loses no datagram between the pods of the workers not being updated", func() {
		for _, s := range res.Roll {
			Expect(s.Others.Sent).To(BeNumerically(">", 0), "%s: no pod of another worker was probed", s.Name)
			Expect(s.Others.Lost).To(BeZero(), "%s: %d of %d datagrams lost", s.Name, s.Others.Lost, s.Others.Sent)
		}
	})

	It("has each updated worker's new pods reach every other pod again before its step ends", func() {
		var figures []string
		for _, s := range res.Roll {
			if !strings.HasPrefix(s.Name, "update worker/") {
				continue
			}
			Expect(s.Reached).To(BeTrue(), "%s: its new pods never reached the others", s.Name)
			figures = append(figures, fmt.Sprintf("%s %.1f s", strings.TrimPrefix(s.Name, "update "), s.Reach.Seconds()))
		}
		clustertest.Figure("new pods reach the others after their worker's update: " + strings.Join(figures, ", "))
	})
})
