package scenario_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/flannel-dns/flannel-dns/src/e2e/cluster"
	"github.com/flannel-dns/flannel-dns/src/e2e/scenario"
)

var _ = Describe("the pass criteria", func() {
	w0 := scenario.WorkerState{Name: "worker/0", FlanneldPID: 100, Subnet: "198.18.3.1/24", LeaseInEtcd: true}
	good := func() []scenario.Step {
		return []scenario.Step{
			{Name: "deploy", Workers: []scenario.WorkerState{w0}},
			{Name: "scale", MasterStep: true, Sent: 50, Workers: []scenario.WorkerState{w0},
				Changes: cluster.Changes{Deleted: []string{"master/2"}, KuboUpdated: []string{"worker/0"}}},
		}
	}

	It("passes a run where nothing on the workers changed", func() {
		Expect(scenario.Violations(good())).To(BeEmpty())
		Expect(scenario.KuboContrast(good())).To(BeEmpty())
	})

	DescribeTable("names each broken criterion",
		func(change func(*scenario.Step), message string) {
			steps := good()
			change(&steps[1])
			Expect(scenario.Violations(steps)).To(ContainElement(ContainSubstring(message)))
		},
		Entry("a worker updated", func(s *scenario.Step) { s.Changes.Updated = []string{"worker/0"} }, "worker/0 was updated"),
		Entry("probe loss", func(s *scenario.Step) { s.Lost = 1 }, "lost 1 of 50"),
		Entry("no probing", func(s *scenario.Step) { s.Sent = 0 }, "lost 0 of 0"),
		Entry("flanneld restarted", func(s *scenario.Step) { s.Workers[0].FlanneldPID = 101 }, "PID changed from 100 to 101"),
		Entry("new subnet", func(s *scenario.Step) { s.Workers[0].Subnet = "198.18.4.1/24" }, "subnet changed"),
		Entry("lease gone", func(s *scenario.Step) { s.Workers[0].LeaseInEtcd = false }, "is not in etcd"),
		Entry("no flanneld", func(s *scenario.Step) { s.Workers[0].FlanneldPID = 0 }, "has no flanneld"),
	)

	It("reports a master step in which the kubo-style job would leave a worker alone", func() {
		steps := good()
		steps[1].Changes.KuboUpdated = nil
		Expect(scenario.KuboContrast(steps)).To(ConsistOf(ContainSubstring("kubo-style worker/0 would not be updated")))
	})
})
