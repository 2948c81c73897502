package lifecycle_test

import (
	"fmt"
	"os"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/flannel-dns/flannel-dns/e2e/boshdns"
	"github.com/flannel-dns/flannel-dns/e2e/cluster"
	"github.com/flannel-dns/flannel-dns/e2e/clustertest"
)

var _ = Describe("BOSH's lifecycle on the simulated VMs", Ordered, func() {
	var c *cluster.Cluster

	BeforeAll(func() { c = clustertest.Deploy(1, 1) })
	AfterEach(func() { clustertest.PrintLogsOnFailure(c) })

	It("runs flanneld under bpm as vcap with bpm.yml's capabilities", func() {
		w := c.Workers()[0]
		status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", w.FlanneldPID()))
		Expect(err).NotTo(HaveOccurred())
		GinkgoWriter.Println(string(status))
		Expect(cluster.Subnet(w)).NotTo(BeEmpty())
		answer, err := boshdns.Query(w.Namespace, boshdns.Resolver, "etcd.cfcr.internal")
		Expect(err).NotTo(HaveOccurred())
		Expect(answer.Addresses).To(ConsistOf(c.AnyMaster().Address.String()))
		Expect(strings.Contains(string(status), "Seccomp:\t2")).To(BeTrue())
	})
})
