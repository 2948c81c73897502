package standin_test

import (
	"os"
	"path/filepath"
	"runtime"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/flannel-dns/flannel-dns/src/director/interpolate"
	"github.com/flannel-dns/flannel-dns/src/director/placement"
	"github.com/flannel-dns/flannel-dns/src/restart-impact/standin"
)

func repoRoot() string {
	_, here, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(here), "..", "..", "..")
}

func fixture(name string) string {
	return filepath.Join(repoRoot(), "..", "shared", "fixtures", name)
}

// adopted is the upstream CFCR v0.32.0 manifest with flannel-dns swapped in, ((variables)) unfilled.
func adopted() []byte {
	root := repoRoot()
	out, err := interpolate.Manifest(interpolate.BoshPath(), fixture("cfcr-v0.32.0.yml"),
		filepath.Join(root, "manifests", "ops-files", "use-flannel-dns.yml"),
		filepath.Join(root, "manifests", "ops-files", "flannel-dns-tls-etcd-v0-29-0.yml"))
	Expect(err).NotTo(HaveOccurred())
	return out
}

func jobProps(manifest []byte, group, job string) map[string]any {
	d, err := placement.Place(placement.Input{Manifest: manifest})
	Expect(err).NotTo(HaveOccurred())
	g, found := d.Group(group)
	Expect(found).To(BeTrue())
	j, found := g.Job(job)
	Expect(found).To(BeTrue())
	return j.Properties
}

func clientCert(manifest []byte) string {
	tls := jobProps(manifest, "worker", "flanneld")["tls"].(map[string]any)
	return tls["etcdctl"].(map[string]any)["certificate"].(string)
}

var _ = Describe("Store", func() {
	var store *standin.Store

	BeforeEach(func() {
		GinkgoT().Setenv("TMPDIR", GinkgoT().TempDir())
		var err error
		store, err = standin.NewStore(interpolate.BoshPath())
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(store.Close)
	})

	It("fills the release's credentials and leaves the rest, even variables the bosh CLI cannot generate", func() {
		filled, err := store.Fill("flannel-dns", adopted())
		Expect(err).NotTo(HaveOccurred())
		Expect(clientCert(filled[0])).To(HavePrefix("-----BEGIN CERTIFICATE-----"))
		Expect(jobProps(filled[0], "worker", "kubelet")).To(HaveKeyWithValue("api-token", "((kubelet-password))"))
	})

	It("gives manifests filled through one store the same values, and another store other values", func() {
		both, err := store.Fill("flannel-dns", adopted(), adopted())
		Expect(err).NotTo(HaveOccurred())
		first := both[0]
		Expect(clientCert(both[1])).To(Equal(clientCert(first)))

		other, err := standin.NewStore(interpolate.BoshPath())
		Expect(err).NotTo(HaveOccurred())
		defer other.Close()
		third, err := other.Fill("flannel-dns", adopted())
		Expect(err).NotTo(HaveOccurred())
		Expect(clientCert(third[0])).NotTo(Equal(clientCert(first)))
	})

	It("keeps its files in a private directory that Close removes", func() {
		_, err := store.Fill("flannel-dns", adopted())
		Expect(err).NotTo(HaveOccurred())
		dirs, err := filepath.Glob(filepath.Join(os.TempDir(), "standin-*"))
		Expect(err).NotTo(HaveOccurred())
		Expect(dirs).To(HaveLen(1))
		Expect(filepath.Join(dirs[0], "vars.yml")).To(BeAnExistingFile())
		info, err := os.Stat(dirs[0])
		Expect(err).NotTo(HaveOccurred())
		Expect(info.Mode().Perm()).To(Equal(os.FileMode(0o700)))
		Expect(store.Close()).To(Succeed())
		Expect(dirs[0]).NotTo(BeADirectory())
	})

	It("fills the same variables in every manifest, so that filling adds no difference", func() {
		kubo, err := interpolate.Manifest(interpolate.BoshPath(), fixture("cfcr-v0.32.0.yml"))
		Expect(err).NotTo(HaveOccurred())
		filled, err := store.Fill("flannel-dns", kubo, adopted())
		Expect(err).NotTo(HaveOccurred())
		Expect(jobProps(filled[0], "master", "etcd")).To(Equal(jobProps(filled[1], "master", "etcd")))
	})

	It("names the manifest problem", func() {
		_, err := store.Fill("flannel-dns", []byte("instance_groups: [{name: g, stemcell: nope}]"))
		Expect(err).To(MatchError(ContainSubstring("stemcell 'nope' is not an alias")))
	})
})
