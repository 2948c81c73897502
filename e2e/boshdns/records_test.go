package boshdns_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/flannel-dns/flannel-dns/e2e/boshdns"
	"github.com/flannel-dns/flannel-dns/e2e/director"
)

var _ = Describe("Records", func() {
	aliases := `{
  "etcd.cfcr.internal": ["*.master.default.cfcr.bosh"],
  "master-0.etcd.cfcr.internal": ["q-i0.master.default.cfcr.bosh"],
  "master-2.etcd.cfcr.internal": ["q-i2.master.default.cfcr.bosh"],
  "master-5.etcd.cfcr.internal": ["q-i5.master.default.cfcr.bosh"]
}`
	plan := func(jobs map[string]director.Files) *director.Plan {
		p := &director.Plan{Rendered: map[string]director.Rendered{}}
		for i, addr := range []string{"192.0.2.10", "192.0.2.11", "192.0.2.12"} {
			inst := director.Instance{Group: "master", Index: i, ID: "m" + addr, Address: addr}
			p.Rendered[inst.ID] = director.Rendered{Instance: inst, Jobs: jobs}
		}
		w := director.Instance{Group: "worker", Index: 0, ID: "w0", Address: "192.0.2.100"}
		p.Rendered[w.ID] = director.Rendered{Instance: w}
		return p
	}

	It("resolves group queries to every instance of the group and q-iN to instance index N", func() {
		recs, err := boshdns.Records(plan(map[string]director.Files{"cfcr-dns-aliases": {"dns/aliases.json": []byte(aliases)}}), "default", "cfcr")
		Expect(err).NotTo(HaveOccurred())
		Expect(recs["etcd.cfcr.internal"]).To(ConsistOf("192.0.2.10", "192.0.2.11", "192.0.2.12"))
		Expect(recs["master-0.etcd.cfcr.internal"]).To(Equal([]string{"192.0.2.10"}))
		Expect(recs["master-2.etcd.cfcr.internal"]).To(Equal([]string{"192.0.2.12"}))
		Expect(recs).NotTo(HaveKey("master-5.etcd.cfcr.internal"))
		Expect(recs["w0.worker.default.cfcr.bosh"]).To(Equal([]string{"192.0.2.100"}))
	})

	It("refuses a target outside the deployment, naming the alias", func() {
		bad := `{"etcd.cfcr.internal": ["*.master.other.cfcr.bosh"]}`
		_, err := boshdns.Records(plan(map[string]director.Files{"x": {"dns/aliases.json": []byte(bad)}}), "default", "cfcr")
		Expect(err).To(MatchError(ContainSubstring("Alias etcd.cfcr.internal")))
	})
})
