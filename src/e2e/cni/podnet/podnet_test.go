package podnet_test

import (
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/flannel-dns/flannel-dns/src/e2e/cni/podnet"
)

var _ = Describe("Load", func() {
	var dir string

	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		Expect(os.WriteFile(path, []byte(content), 0o644)).To(Succeed())
		return path
	}

	BeforeEach(func() { dir = GinkgoT().TempDir() })

	It("picks the first usable file by name, as kubelet does", func() {
		write("60-other.conflist", `{"cniVersion": "0.3.1", "name": "other", "plugins": [{"type": "bridge"}]}`)
		flannel := write("50-flannel.conflist", `{"cniVersion": "0.3.1", "name": "flannel-network",
			"plugins": [{"type": "flannel"}, {"type": "portmap", "capabilities": {"portMappings": true}}]}`)
		write("10-broken.conflist", `{"name": `)
		write("05-empty.conflist", `{"cniVersion": "0.3.1", "name": "empty", "plugins": []}`)
		write("01-notes.txt", `not a config`)

		networks, err := podnet.Load(dir, []string{"/opt/cni/bin"})
		Expect(err).NotTo(HaveOccurred())
		Expect(networks.File).To(Equal(flannel))
		Expect(networks.Default.Name).To(Equal("flannel-network"))
		Expect(networks.Default.Plugins).To(HaveLen(2))
		Expect(networks.Default.Plugins[1].Network.Type).To(Equal("portmap"))
	})

	It("takes a single-plugin .conf as a list of one, as kubo's older 10-flannel.conf was", func() {
		write("10-flannel.conf", `{"cniVersion": "0.3.1", "name": "cbr0", "type": "flannel"}`)
		networks, err := podnet.Load(dir, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(networks.Default.Name).To(Equal("cbr0"))
		Expect(networks.Default.Plugins).To(HaveLen(1))
		Expect(networks.Default.Plugins[0].Network.Type).To(Equal("flannel"))
	})

	It("names the directory when nothing in it is usable", func() {
		write("10-broken.conflist", `{"name": `)
		_, err := podnet.Load(dir, nil)
		Expect(err).To(MatchError(ContainSubstring("No usable CNI network config in " + dir)))
	})
})
