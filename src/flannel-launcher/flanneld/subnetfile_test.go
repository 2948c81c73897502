package flanneld_test

import (
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
})
