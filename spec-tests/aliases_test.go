package spectests_test

import (
	"encoding/json"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

const aliasesFile = "dns/aliases.json"

func renderAliases(dotted map[string]interface{}) (map[string][]string, error) {
	rendered, err := renderer.RenderFile(aliases, aliasesFile, manifest(dotted), worker(0))
	if err != nil {
		return nil, err
	}
	var result map[string][]string
	Expect(json.Unmarshal(rendered, &result)).To(Succeed())
	return result, nil
}

var _ = Describe("cfcr-dns-aliases", func() {
	It("points master and etcd at the master group query and each member name at its instance index", func() {
		result, err := renderAliases(nil)
		Expect(err).NotTo(HaveOccurred())
		want := map[string][]string{
			"master.cfcr.internal": {"*.master.default.cfcr.bosh"},
			"etcd.cfcr.internal":   {"*.master.default.cfcr.bosh"},
		}
		for n := 0; n < 7; n++ {
			want[fmt.Sprintf("master-%d.etcd.cfcr.internal", n)] = []string{fmt.Sprintf("q-i%d.master.default.cfcr.bosh", n)}
		}
		Expect(result).To(Equal(want))
	})

	It("uses the group, network, deployment, domain and member count it is given, in BOSH's DNS spelling", func() {
		result, err := renderAliases(map[string]interface{}{
			"group": "control_plane", "network": "Pods", "deployment": "k8s-prod", "domain": "k8s.internal", "max-members": 2,
		})
		Expect(err).NotTo(HaveOccurred())
		Expect(result).To(Equal(map[string][]string{
			"master.k8s.internal":               {"*.control-plane.pods.k8s-prod.bosh"},
			"etcd.k8s.internal":                 {"*.control-plane.pods.k8s-prod.bosh"},
			"control-plane-0.etcd.k8s.internal": {"q-i0.control-plane.pods.k8s-prod.bosh"},
			"control-plane-1.etcd.k8s.internal": {"q-i1.control-plane.pods.k8s-prod.bosh"},
		}))
	})

	DescribeTable("fails on a bad value, naming the property",
		func(dotted map[string]interface{}, want ...string) {
			_, err := renderAliases(dotted)
			expectFailureNaming(err, want...)
		},
		Entry("no members", map[string]interface{}{"max-members": 0}, "max-members", "'0'"),
		Entry("members not a number", map[string]interface{}{"max-members": "three"}, "max-members", "'three'"),
		Entry("empty group", map[string]interface{}{"group": ""}, "group", "''"),
		Entry("group with a space", map[string]interface{}{"group": "my master"}, "group", "'my master'"),
		Entry("network with a dot", map[string]interface{}{"network": "a.b"}, "network", "'a.b'"),
		Entry("empty deployment", map[string]interface{}{"deployment": ""}, "deployment", "''"),
		Entry("domain with a space", map[string]interface{}{"domain": "cfcr internal"}, "domain", "'cfcr internal'"),
	)
})
