package director_test

import (
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/flannel-dns/flannel-dns/src/e2e/agent"
	"github.com/flannel-dns/flannel-dns/src/e2e/director"
)

// listing renders two jobs: "static", the same bytes for any instance, which the VM runs, and "listing",
// rendered only, whose only file lists the masters it is told about, like a template that iterates a link.
type listing struct {
	masters []string
	pkgs    map[string]string // the compiled packages of "static"
}

func (l *listing) Render(director.Instance, []director.Instance) ([]agent.Job, error) {
	return []agent.Job{{Name: "static", Files: map[string][]byte{"config": []byte("same")}, PackageDirs: l.pkgs},
		{Name: "listing", Files: map[string][]byte{"config": []byte(fmt.Sprint(l.masters))}, RenderedOnly: true}}, nil
}

var _ = Describe("Deploy", func() {
	var r *listing
	instances := func(ids ...string) []director.Instance {
		var list []director.Instance
		for i, id := range ids {
			list = append(list, director.Instance{Group: "worker", Index: i, ID: id})
		}
		return list
	}

	BeforeEach(func() { r = &listing{masters: []string{"a", "b"}} })

	It("creates every instance on the first deploy", func() {
		plan, err := director.Deploy(r, instances("x", "y"), nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(plan.Created).To(Equal([]string{"worker/0", "worker/1"}))
		Expect(plan.Updated).To(BeEmpty())
	})

	It("leaves alone an instance whose rendered jobs are byte-identical", func() {
		first, _ := director.Deploy(r, instances("x", "y"), nil)
		plan, err := director.Deploy(r, instances("x", "y"), first)
		Expect(err).NotTo(HaveOccurred())
		Expect(plan.Updated).To(BeEmpty())
		Expect(plan.Created).To(BeEmpty())
	})

	It("updates every instance whose rendered output changed", func() {
		first, _ := director.Deploy(r, instances("x", "y"), nil)
		r.masters = append(r.masters, "c")
		plan, err := director.Deploy(r, instances("x", "y"), first)
		Expect(err).NotTo(HaveOccurred())
		Expect(plan.Updated).To(Equal([]string{"worker/0", "worker/1"}))
		Expect(plan.IsUpdated("worker/1")).To(BeTrue())
	})

	It("updates every instance whose jobs get another version of a package, the templates unchanged", func() {
		r.pkgs = map[string]string{"launcher": "/compiled/launcher/aaa", "go": "/compiled/go/111"}
		first, _ := director.Deploy(r, instances("x", "y"), nil)
		r.pkgs = map[string]string{"launcher": "/compiled/launcher/bbb", "go": "/compiled/go/111"}
		plan, err := director.Deploy(r, instances("x", "y"), first)
		Expect(err).NotTo(HaveOccurred())
		Expect(plan.Updated).To(Equal([]string{"worker/0", "worker/1"}))
	})

	It("tells a replaced instance (same name, new ID) as deleted and created", func() {
		first, _ := director.Deploy(r, instances("x", "y"), nil)
		plan, err := director.Deploy(r, instances("x", "z"), first)
		Expect(err).NotTo(HaveOccurred())
		Expect(plan.Deleted).To(Equal([]string{"worker/1"}))
		Expect(plan.Created).To(Equal([]string{"worker/1"}))
		Expect(plan.Updated).To(BeEmpty())
	})
})

var _ = Describe("Pick", func() {
	uploaded := []director.Release{{Version: "1"}, {Version: "2"}}

	It("finds the version a manifest names among the uploads", func() {
		r, err := director.Pick("flannel-dns", "1", uploaded)
		Expect(err).NotTo(HaveOccurred())
		Expect(r.Version).To(Equal("1"))
	})

	It("takes the last upload for latest", func() {
		r, err := director.Pick("flannel-dns", "latest", uploaded)
		Expect(err).NotTo(HaveOccurred())
		Expect(r.Version).To(Equal("2"))
	})

	It("refuses a version that was not uploaded, naming it, as the director does", func() {
		_, err := director.Pick("flannel-dns", "2", uploaded[:1])
		Expect(err).To(MatchError("Release version 'flannel-dns/2' doesn't exist"))
	})

	It("refuses a release that was never uploaded", func() {
		_, err := director.Pick("flannel-dns", "latest", nil)
		Expect(err).To(MatchError("Release 'flannel-dns' doesn't exist"))
	})
})
