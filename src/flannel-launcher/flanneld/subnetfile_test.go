package flanneld_test

import (
	"net/netip"
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/flanneld"
)

var _ = Describe("SubnetFile", func() {
	var path string

	// replace writes the file as flanneld does: a new file renamed over the old one.
	replace := func(content string) {
		tmp := path + ".tmp"
		Expect(os.WriteFile(tmp, []byte(content), 0o644)).To(Succeed())
		Expect(os.Rename(tmp, path)).To(Succeed())
	}

	BeforeEach(func() {
		path = filepath.Join(GinkgoT().TempDir(), "subnet.env")
	})

	It("sees a file that was not there before", func() {
		watch := flanneld.WatchSubnetFile(path)
		Expect(watch.Written()).To(BeFalse())
		replace("FLANNEL_SUBNET=198.18.3.1/24\n")
		Expect(watch.Written()).To(BeTrue())
	})

	It("does not take an earlier run's file for a write, and sees the same content written again", func() {
		replace("FLANNEL_SUBNET=198.18.3.1/24\n")
		watch := flanneld.WatchSubnetFile(path)
		Expect(watch.Written()).To(BeFalse())
		replace("FLANNEL_SUBNET=198.18.3.1/24\n")
		Expect(watch.Written()).To(BeTrue())
	})

	It("does not count a file that is gone again", func() {
		watch := flanneld.WatchSubnetFile(path)
		replace("FLANNEL_SUBNET=198.18.3.1/24\n")
		Expect(os.Remove(path)).To(Succeed())
		Expect(watch.Written()).To(BeFalse())
	})

	Describe("Subnets", func() {
		It("reads FLANNEL_NETWORK and FLANNEL_SUBNET", func() {
			replace("FLANNEL_NETWORK=198.18.0.0/15\nFLANNEL_SUBNET=198.18.3.1/24\nFLANNEL_MTU=1450\n")
			Expect(flanneld.WatchSubnetFile(path).Subnets()).To(Equal(flanneld.Subnets{
				Network: netip.MustParsePrefix("198.18.0.0/15"), Subnet: netip.MustParsePrefix("198.18.3.1/24")}))
		})

		It("names the file and the variable when one is missing or bad", func() {
			replace("FLANNEL_NETWORK=198.18.0.0/15\n")
			_, err := flanneld.WatchSubnetFile(path).Subnets()
			Expect(err).To(MatchError(ContainSubstring("No FLANNEL_SUBNET in '" + path + "'")))
			replace("FLANNEL_NETWORK=198.18.0.0/15\nFLANNEL_SUBNET=198.18.3.1\n")
			_, err = flanneld.WatchSubnetFile(path).Subnets()
			Expect(err).To(MatchError(ContainSubstring("FLANNEL_SUBNET in '" + path + "'")))
			replace("FLANNEL_SUBNET=198.18.3.1/24\n")
			_, err = flanneld.WatchSubnetFile(path).Subnets()
			Expect(err).To(MatchError(ContainSubstring("No FLANNEL_NETWORK in '" + path + "'")))
		})
	})
})
