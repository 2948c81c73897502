// Package clustertest sets up a simulated cluster for one Ginkgo suite: the part that every fault suite
// repeats (config from the environment, skip or fail when it is missing, deploy, destroy, log tails).
package clustertest

import (
	"os"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/flannel-dns/flannel-dns/e2e/cluster"
)

// Deploy creates a cluster with the given masters and workers, to be called from a BeforeAll. It is
// destroyed when the container ends, and any failed spec prints the end of every log first. Without
// E2E_ETCD_BIN and E2E_PACKAGES the suite skips, or fails when E2E_REQUIRED is set (as in CI).
func Deploy(masters, workers int) *cluster.Cluster {
	cfg, unset := cluster.ConfigFromEnv(GinkgoT().TempDir(),
		func(format string, args ...any) { GinkgoWriter.Printf(format+"\n", args...) })
	if unset != "" {
		Expect(os.Getenv("E2E_REQUIRED")).To(BeEmpty(), "%s must be set", unset)
		Skip(unset + " not set (scripts/test-e2e sets them)")
	}
	c, err := cluster.New(cfg)
	DeferCleanup(func() { Expect(c.Destroy()).To(Succeed()) })
	Expect(err).NotTo(HaveOccurred())
	_, err = c.Deploy(masters, workers)
	if err != nil {
		GinkgoWriter.Print(c.LogTails(40))
	}
	Expect(err).NotTo(HaveOccurred())
	return c
}

// PrintLogsOnFailure prints the end of every log of c when the current spec failed; for an AfterEach.
func PrintLogsOnFailure(c *cluster.Cluster) {
	if CurrentSpecReport().Failed() && c != nil {
		GinkgoWriter.Print(c.LogTails(40))
	}
}
