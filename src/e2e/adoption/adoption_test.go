package adoption_test

import (
	"bytes"
	"os"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/flannel-dns/flannel-dns/src/e2e/adoption"
	"github.com/flannel-dns/flannel-dns/src/e2e/cluster"
	"github.com/flannel-dns/flannel-dns/src/e2e/clustertest"
)

// The short form of the rehearsal (src/e2e/cmd/adoption runs the full one): with three workers every pairing of
// flanneld versions is probed while a fourth node is updated, and the canary is recreated mid-roll instead of
// updated (as --recreate or the resurrector would), so it has no subnet file and a new flannel.1.
var plan = adoption.Plan{Masters: 1, Workers: 3, Recreate: "worker/0", Settle: 2 * time.Second}

var _ = Describe("Adopting flannel-dns on a running kubo cluster", Ordered, func() {
	var (
		c   *cluster.Cluster
		res adoption.Result
	)

	BeforeAll(func() {
		c = clustertest.New(cluster.AsKubo)
		var err error
		res, err = adoption.Run(c, plan, func(s adoption.Step) { GinkgoWriter.Println(adoption.Progress(s)) })
		var table bytes.Buffer
		Expect(adoption.WriteTable(&table, res)).To(Succeed())
		clustertest.Figure(table.String())
		if err != nil {
			GinkgoWriter.Print(c.LogTails(40))
		}
		Expect(err).NotTo(HaveOccurred())
	})
	AfterEach(func() { clustertest.PrintLogsOnFailure(c) })

	roll := func() []adoption.Step { return res.Roll }

	It("starts from kubo: flannel 0.12 holds every node's lease in the v2 store only", func() {
		Expect(res.Start.Subnets).To(HaveLen(plan.Masters + plan.Workers))
		Expect(res.Start.V2).To(HaveLen(plan.Masters + plan.Workers))
		Expect(res.Start.V3).To(BeEmpty())
	})

	It("rolls masters first, then workers one at a time, the canary first", func() {
		var names []string
		for _, s := range roll() {
			names = append(names, s.Name)
		}
		Expect(names).To(Equal([]string{"update master/0", "recreate worker/0", "update worker/1", "update worker/2"}))
	})

	It("copies kubo's leases into v3 as the first master starts flannel-dns", func() {
		first := roll()[0]
		for key, node := range res.Start.V2 {
			Expect(first.V3).To(HaveKeyWithValue(key, node), "the v2 lease %s is not in v3", key)
		}
		log, err := os.ReadFile(c.Agent("master/0").VM.Path(cluster.LauncherLog))
		Expect(err).NotTo(HaveOccurred())
		Expect(string(log)).To(ContainSubstring("Imported %d leases of kubo's flanneld from the v2 store into v3", len(res.Start.V2)))
	})

	It("loses no datagram between the pods of workers not being updated, in any pairing, at any step", func() {
		sent := map[adoption.Pair]int{}
		for _, s := range append(roll(), res.Scale) {
			for pair, count := range s.Loss {
				Expect(count.Lost).To(BeZero(), "%s: %d of %d datagrams lost between %s pods", s.Name, count.Lost, count.Sent, pair)
				sent[pair] += count.Sent
			}
		}
		for _, pair := range adoption.Pairs {
			Expect(sent[pair]).To(BeNumerically(">", 0), "no %s pair was probed", pair)
		}
	})

	It("keeps every node's subnet, the recreated worker's too, and no two nodes ever claim one", func() {
		for _, s := range append(roll(), res.Scale) {
			Expect(adoption.Changed(res.Start, s)).To(BeEmpty(), "after %s", s.Name)
			Expect(s.Claims).To(BeEmpty(), "after %s", s.Name)
		}
		last := roll()[len(roll())-1]
		for name, subnet := range last.Subnets {
			key, err := cluster.LeaseKey(subnet)
			Expect(err).NotTo(HaveOccurred())
			Expect(last.V3).To(HaveKeyWithValue(strings.TrimPrefix(key, "/coreos.com/network/subnets/"), c.InstanceAddress(name)),
				"%s's lease is not in v3", name)
		}
	})

	It("gives the recreated worker its flannel.1 back with the MAC the not-yet-updated nodes know", func() {
		log, err := os.ReadFile(c.Agent(plan.Recreate).VM.Path(cluster.LauncherLog))
		Expect(err).NotTo(HaveOccurred())
		Expect(string(log)).To(MatchRegexp(`Created flannel.1 with MAC [0-9a-f:]{17}, the one its lease at '/coreos.com/network/subnets/[0-9.-]+' names`))
	})

	It("updates no worker when the masters are scaled after adoption", func() {
		Expect(res.Scale.Updated).To(ContainElement("master/1"))
		Expect(res.Scale.Updated).NotTo(ContainElement(HavePrefix("worker/")))
		clustertest.Figure("scale masters after adoption: updated " + strings.Join(res.Scale.Updated, ", "))
	})
})
