package links_test

import (
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/flannel-dns/flannel-dns/src/director/links"
	"github.com/flannel-dns/flannel-dns/src/director/placement"
	"github.com/flannel-dns/flannel-dns/src/jobrender"
)

// jobs finds the specs under testdata/jobs (release "shop") and the web job of the templates' tests.
func jobs(release, job string) (jobrender.Job, bool, error) {
	if release != "shop" {
		return jobrender.Job{}, false, nil
	}
	dir := filepath.Join("testdata", "jobs", job)
	if job == "web" {
		dir = filepath.Join("..", "templates", "testdata", "jobs", "web")
	}
	spec, err := jobrender.LoadJob(dir)
	return spec, err == nil, err
}

func place(manifest string) placement.Deployment {
	d, err := placement.Place(placement.Input{Manifest: []byte(manifest)})
	Expect(err).NotTo(HaveOccurred())
	return d
}

const front = `
name: shop
stemcells: [{alias: default, os: ubuntu-jammy}]
instance_groups:
- name: front
  instances: 2
  stemcell: default
  networks: [{name: default}]
  jobs:
  - {name: web, release: shop}
  - {name: kubelet, release: elsewhere}
`

const shop = front + `- name: back
  instances: 3
  stemcell: default
  networks: [{name: default}]
  jobs:
  - name: db
    release: shop
    properties: {db: {port: 5432, password: secret}}
`

var _ = Describe("Resolve", func() {
	It("links a consumer to the one provider of its type, with the link's properties and their defaults", func() {
		resolved, err := links.Resolve(place(shop), jobs)
		Expect(err).NotTo(HaveOccurred())
		db := resolved.Of("front", "web", "db")
		Expect(db).NotTo(BeNil())
		Expect(db.Group).To(Equal("back"))
		Expect(db.Job).To(Equal("db"))
		Expect(db.Properties).To(Equal(map[string]any{"db": map[string]any{"user": "admin", "port": 5432}}))
	})

	It("leaves an optional link without a provider out", func() {
		resolved, err := links.Resolve(place(shop), jobs)
		Expect(err).NotTo(HaveOccurred())
		Expect(resolved.Of("front", "web", "cache")).To(BeNil())
		Expect(resolved.For("front", "web")).To(HaveLen(1))
	})

	It("links an optional link when a job provides it", func() {
		resolved, err := links.Resolve(place(shop+"  - {name: cache, release: shop}\n"), jobs)
		Expect(err).NotTo(HaveOccurred())
		Expect(resolved.For("front", "web")).To(HaveKey("cache"))
	})

	It("fails a required link that no job provides", func() {
		_, err := links.Resolve(place(front), jobs)
		Expect(err).To(MatchError(And(ContainSubstring("'web' on 'front'"), ContainSubstring("'db'"), ContainSubstring("no job provides"))))
	})

	It("fails a link that several jobs provide", func() {
		twice := shop + `- name: spare
  instances: 1
  stemcell: default
  networks: [{name: default}]
  jobs:
  - {name: db, release: shop}
`
		_, err := links.Resolve(place(twice), jobs)
		Expect(err).To(MatchError(And(ContainSubstring("several jobs provide"), ContainSubstring("back/db"), ContainSubstring("spare/db"))))
	})
})

var _ = Describe("Provider.Spec", func() {
	It("lists the instances and says where link().address points", func() {
		resolved, err := links.Resolve(place(shop), jobs)
		Expect(err).NotTo(HaveOccurred())
		spec := resolved.Of("front", "web", "db").Spec("shop", "default", []links.Instance{
			{Name: "back", Index: 0, ID: "aaa", Address: "aaa.back.default.shop.bosh", Bootstrap: true}})
		Expect(spec).To(HaveKeyWithValue("instance_group", "back"))
		Expect(spec).To(HaveKeyWithValue("deployment_name", "shop"))
		Expect(spec).To(HaveKeyWithValue("default_network", "default"))
		Expect(spec["instances"]).To(ConsistOf(links.Instance{Name: "back", Index: 0, ID: "aaa", Address: "aaa.back.default.shop.bosh", Bootstrap: true}))
	})
})
