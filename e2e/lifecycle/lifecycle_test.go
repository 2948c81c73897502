package lifecycle_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/flannel-dns/flannel-dns/e2e/cluster"
	"github.com/flannel-dns/flannel-dns/e2e/clustertest"
)

var _ = Describe("BOSH's lifecycle on the simulated VMs", Ordered, func() {
	var c *cluster.Cluster

	BeforeAll(func() { c = clustertest.Deploy(1, 0) })
	AfterEach(func() { clustertest.PrintLogsOnFailure(c) })

	It("deploys", func() {
		Expect(c.Masters()).To(HaveLen(1))
	})
})
