package stemcell_test

import (
	"github.com/flannel-dns/flannel-dns/src/testenv/cache"

	"os"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/flannel-dns/flannel-dns/src/e2e/stemcell"
)

var _ = Describe("a stemcell line", func() {
	It("has xenial's 4.15 lack both pidfd calls and jammy's 5.15 none", func() {
		names := func(line string) []string {
			var lacking []string
			for _, s := range stemcell.Lines[line].Kernel.Lacks() {
				lacking = append(lacking, s.Name)
			}
			return lacking
		}
		Expect(names("ubuntu-xenial-97.x")).To(Equal([]string{"pidfd_open", "pidfd_getfd"}))
		Expect(names("ubuntu-xenial-315.x")).To(Equal([]string{"pidfd_open", "pidfd_getfd"}))
		Expect(names("ubuntu-jammy")).To(BeEmpty())
		Expect(stemcell.Kernel{Major: 5, Minor: 4}.Lacks()).To(HaveExactElements(HaveField("Name", "pidfd_getfd")))
	})

	It("loads the builder's sysctls, applying in a VM only what a network namespace has its own copy of", func() {
		if _, err := os.Stat(cache.Path("stemcell-ubuntu-jammy")); err != nil {
			Expect(os.Getenv("E2E_REQUIRED")).To(BeEmpty(), "no unpacked stemcell (scripts/unpack-stemcells)")
			Skip("no unpacked stemcell (scripts/unpack-stemcells)")
		}
		for line := range stemcell.Lines {
			s, err := stemcell.Load(cache.Dir(), line)
			Expect(err).NotTo(HaveOccurred())
			Expect(s.Sysctls).To(ContainElements(
				stemcell.Sysctl{Key: "net.ipv4.tcp_keepalive_time", Value: "120", Namespaced: true},
				stemcell.Sysctl{Key: "net.ipv4.tcp_keepalive_probes", Value: "8", Namespaced: true},
				stemcell.Sysctl{Key: "net.ipv4.ip_forward", Value: "0", Namespaced: true},
				stemcell.Sysctl{Key: "net.ipv4.neigh.default.gc_thresh1", Value: "0", Namespaced: false},
				stemcell.Sysctl{Key: "kernel.dmesg_restrict", Value: "1", Namespaced: false},
			), line)
		}
	})

	It("names the line it does not know", func() {
		_, err := stemcell.Load(GinkgoT().TempDir(), "ubuntu-trusty")
		Expect(err).To(MatchError("No stemcell line 'ubuntu-trusty'"))
	})

	It("names the stemcell whose sysctl files are missing", func() {
		_, err := stemcell.Load(GinkgoT().TempDir(), "ubuntu-jammy")
		Expect(err).To(MatchError(ContainSubstring("Reading the sysctls of stemcell ubuntu-jammy")))
	})
})
