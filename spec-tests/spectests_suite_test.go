package spectests_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	boshlog "github.com/cloudfoundry/bosh-utils/logger"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/flannel-dns/flannel-dns/src/jobrender"
	"github.com/flannel-dns/flannel-dns/src/testenv/pki"
)

func TestSpecTests(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Job template Suite")
}

// TLS material in PEM, as an operator puts it into the manifest.
type pems struct{ ca, cert, key, otherKey string }

var (
	bpmCheck string
	renderer jobrender.Renderer
	flanneld jobrender.Job
	aliases  jobrender.Job
	tlsPEMs  pems
)

var _ = BeforeSuite(func() {
	renderer = jobrender.NewRenderer(boshlog.NewLogger(boshlog.LevelNone))
	bpmCheck = buildBPMCheck()
	var err error
	flanneld, err = jobrender.LoadJob("../jobs/flanneld")
	Expect(err).NotTo(HaveOccurred())
	aliases, err = jobrender.LoadJob("../jobs/cfcr-dns-aliases")
	Expect(err).NotTo(HaveOccurred())

	dir := GinkgoT().TempDir()
	ca, err := pki.NewCA(dir, "etcd-ca")
	Expect(err).NotTo(HaveOccurred())
	client, err := ca.Issue(pki.Client("flanneld"))
	Expect(err).NotTo(HaveOccurred())
	other, err := ca.Issue(pki.Client("someone-else"))
	Expect(err).NotTo(HaveOccurred())
	tlsPEMs = pems{ca: read(ca.CertFile), cert: read(client.CertFile), key: read(client.KeyFile), otherKey: read(other.KeyFile)}
})

func read(path string) string {
	data, err := os.ReadFile(path)
	Expect(err).NotTo(HaveOccurred())
	return string(data)
}

// manifest turns spec-style dotted names into the nested properties of a deployment manifest.
func manifest(dotted map[string]interface{}) map[string]interface{} {
	properties := map[string]interface{}{}
	for name, value := range dotted {
		keys := strings.Split(name, ".")
		level := properties
		for _, key := range keys[:len(keys)-1] {
			if _, ok := level[key].(map[string]interface{}); !ok {
				level[key] = map[string]interface{}{}
			}
			level = level[key].(map[string]interface{})
		}
		level[keys[len(keys)-1]] = value
	}
	return properties
}

// withTLS is the least a manifest must give the flanneld job, plus the dotted properties given.
func withTLS(dotted map[string]interface{}) map[string]interface{} {
	all := map[string]interface{}{
		"tls.etcdctl.ca": tlsPEMs.ca, "tls.etcdctl.certificate": tlsPEMs.cert, "tls.etcdctl.private_key": tlsPEMs.key,
	}
	for name, value := range dotted {
		all[name] = value
	}
	return manifest(all)
}

// worker is an instance context of a worker VM; what it holds does not matter to these jobs.
func worker(index int) jobrender.Instance {
	ip := fmt.Sprintf("192.0.2.%d", 100+index)
	return jobrender.Instance{
		Group: "worker", ID: fmt.Sprintf("a0b1c2d3-0000-4000-8000-%012d", index), Index: index, AZ: "z1",
		Address: ip, Deployment: "cfcr",
		Networks: map[string]jobrender.Network{"default": {IP: ip, Netmask: "255.255.255.0", Gateway: "192.0.2.1"}},
	}
}

// expectFailureNaming checks that rendering failed with a message holding every fragment (the property's name,
// the quoted bad value).
func expectFailureNaming(err error, fragments ...string) {
	Expect(err).To(HaveOccurred())
	for _, fragment := range fragments {
		Expect(err.Error()).To(ContainSubstring(fragment))
	}
}
