package manifests_test

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	boshlog "github.com/cloudfoundry/bosh-utils/logger"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/flannel-dns/flannel-dns/src/director/interpolate"
	"github.com/flannel-dns/flannel-dns/src/finalrelease"
	"github.com/flannel-dns/flannel-dns/src/jobrender"
)

func TestManifests(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Manifests Suite")
}

var (
	repoRoot string
	bosh     string
	renderer jobrender.Renderer
)

var _ = BeforeSuite(func() {
	_, here, _, _ := runtime.Caller(0)
	repoRoot = filepath.Dir(filepath.Dir(here))
	renderer = jobrender.NewRenderer(boshlog.NewWriterLogger(boshlog.LevelError, GinkgoWriter))
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
	// cliCreds are operations that let the bosh CLI's vars store generate the credentials: it refuses some
	// options that CredHub takes.
	cliCreds string
}

var fixtures = []fixture{
	{file: "cfcr-v0.21.0.yml", companion: "flannel-dns-tls-etcd-v0-17-0.yml"},
	{file: "cfcr-v0.32.0.yml", companion: "flannel-dns-tls-etcd-v0-29-0.yml",
		cliCreds: "- {type: remove, path: /variables/name=tls-kube-controller-manager/options/key_usage}\n"},
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

// adopted is the fixture with flannel-dns swapped in, plus any further ops-files; ((variables)) stay.
func (f fixture) adopted(more ...string) []byte {
	out, err := interpolate.Manifest(bosh, f.path(), f.adoptionOps(more)...)
	Expect(err).NotTo(HaveOccurred())
	return out
}

// adoptedWithCreds is adopted with the credentials from (or generated into) the vars store, as a VM gets them.
func (f fixture) adoptedWithCreds(store string, more ...string) []byte {
	if f.cliCreds != "" {
		more = append(more, writeOps(f.cliCreds))
	}
	out, err := interpolate.WithVarsStore(bosh, f.path(), store, f.adoptionOps(more)...)
	Expect(err).NotTo(HaveOccurred())
	return out
}

func (f fixture) adoptionOps(more []string) []string {
	return append([]string{opsFile("use-flannel-dns.yml"), opsFile(f.companion)}, more...)
}

// instancesOps writes an ops-file that sets the number of instances of a group.
func instancesOps(group string, n int) string {
	return writeOps("- type: replace\n  path: /instance_groups/name=" + group + "/instances\n  value: " + strconv.Itoa(n) + "\n")
}

func writeOps(ops string) string {
	path := filepath.Join(GinkgoT().TempDir(), "ops.yml")
	Expect(os.WriteFile(path, []byte(ops), 0o600)).To(Succeed())
	return path
}

// newestFinal is the highest final release version in releases/flannel-dns/index.yml.
func newestFinal() string {
	newest, err := finalrelease.NewestVersion(repoRoot)
	Expect(err).NotTo(HaveOccurred())
	return strconv.Itoa(newest)
}
