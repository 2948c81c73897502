package manifests_test

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/flannel-dns/flannel-dns/interpolate"
)

func TestManifests(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Manifests Suite")
}

var (
	repoRoot string
	bosh     string
)

var _ = BeforeSuite(func() {
	_, here, _, _ := runtime.Caller(0)
	repoRoot = filepath.Dir(filepath.Dir(here))
	bosh = interpolate.BoshPath()
	Expect(bosh).To(BeAnExistingFile(), "the bosh CLI is missing: run scripts/build-bosh-cli")
	for _, f := range fixtures {
		Expect(f.path()).To(BeAnExistingFile(), "shared/ must sit beside the checkout")
	}
})

// fixture is an upstream CFCR manifest and the etcd-certificate companion that goes with it.
type fixture struct {
	file      string
	companion string
}

var fixtures = []fixture{
	{file: "cfcr-v0.21.0.yml", companion: "flannel-dns-tls-etcd-v0-17-0.yml"},
	{file: "cfcr-v0.32.0.yml", companion: "flannel-dns-tls-etcd-v0-29-0.yml"},
}

func (f fixture) path() string {
	return filepath.Join(repoRoot, "..", "shared", "fixtures", f.file)
}

// example is the standalone example deployment.
func example() string {
	return filepath.Join(repoRoot, "manifests", "flannel-dns.yml")
}

func opsFile(name string) string {
	return filepath.Join(repoRoot, "manifests", "ops-files", name)
}

// adopted is the fixture with flannel-dns swapped in, plus any further ops-files.
func (f fixture) adopted(more ...string) []byte {
	ops := append([]string{opsFile("use-flannel-dns.yml"), opsFile(f.companion)}, more...)
	out, err := interpolate.Manifest(bosh, f.path(), ops...)
	Expect(err).NotTo(HaveOccurred())
	return out
}

// instancesOps writes an ops-file that sets the number of instances of a group.
func instancesOps(group string, n int) string {
	path := filepath.Join(GinkgoT().TempDir(), "instances.yml")
	op := []byte("- type: replace\n  path: /instance_groups/name=" + group + "/instances\n  value: " + strconv.Itoa(n) + "\n")
	Expect(os.WriteFile(path, op, 0o600)).To(Succeed())
	return path
}
