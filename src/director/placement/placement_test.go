package placement_test

import (
	"os"
	"path/filepath"
	"runtime"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/flannel-dns/flannel-dns/src/director/placement"
)

const base = `
name: demo
stemcells:
- {alias: default, os: ubuntu-jammy}
- {alias: win, os: windows2019}
properties: {global: true}
instance_groups:
- name: api
  instances: 2
  azs: [z1]
  networks: [{name: default}]
  stemcell: default
  jobs:
  - {name: server, release: web, properties: {port: 80}}
  - {name: sidecar, release: web}
- name: db
  instances: 1
  persistent_disk_type: large
  azs: [z2]
  networks: [{name: private}]
  stemcell: win
  properties: {group_level: yes}
  jobs:
  - {name: store, release: data}
- name: smoke
  lifecycle: errand
  instances: 1
  azs: [z1]
  networks: [{name: default}]
  stemcell: default
  jobs:
  - {name: check, release: web, properties: {}}
`

// groupsWith returns the names of the groups on which a job called name lands.
func groupsWith(d placement.Deployment, name string) []string {
	var names []string
	for _, g := range d.Groups {
		if _, found := g.Job(name); found {
			names = append(names, g.Name)
		}
	}
	return names
}

func place(manifest string, runtimeConfigs ...string) (placement.Deployment, error) {
	in := placement.Input{Manifest: []byte(manifest), Teams: []string{"ops"}}
	for _, rc := range runtimeConfigs {
		in.RuntimeConfigs = append(in.RuntimeConfigs, []byte(rc))
	}
	return placement.Place(in)
}

var _ = Describe("Place", func() {
	It("places each instance group's own jobs with their properties", func() {
		d, err := place(base)
		Expect(err).NotTo(HaveOccurred())
		Expect(d.Name).To(Equal("demo"))

		api, found := d.Group("api")
		Expect(found).To(BeTrue())
		Expect(api.OS).To(Equal("ubuntu-jammy"))
		Expect(api.Lifecycle).To(Equal("service"))
		Expect(api.Jobs).To(HaveLen(2))
		Expect(api.Jobs[0]).To(Equal(placement.Job{Name: "server", Release: "web", Properties: map[string]any{"port": 80}}))
	})

	It("tells which groups have a persistent disk, by size or by type", func() {
		d, err := place(base + "  persistent_disk: 1024\n")
		Expect(err).NotTo(HaveOccurred())
		has := map[string]bool{}
		for _, g := range d.Groups {
			has[g.Name] = g.PersistentDisk
		}
		Expect(has).To(Equal(map[string]bool{"api": false, "db": true, "smoke": true}))
	})

	It("falls back to instance group, then global properties, but keeps a job's explicit {}", func() {
		d, err := place(base)
		Expect(err).NotTo(HaveOccurred())
		api, _ := d.Group("api")
		sidecar, _ := api.Job("sidecar")
		Expect(sidecar.Properties).To(Equal(map[string]any{"global": true}))
		db, _ := d.Group("db")
		store, _ := db.Job("store")
		Expect(store.Properties).To(Equal(map[string]any{"group_level": "yes"}))
		smoke, _ := d.Group("smoke")
		check, _ := smoke.Job("check")
		Expect(check.Properties).To(BeEmpty())
	})

	DescribeTable("runtime config addon rules",
		func(rules string, want []string) {
			rc := "addons:\n- name: extra\n  jobs: [{name: extra, release: tools}]\n" + rules
			d, err := place(base, rc)
			Expect(err).NotTo(HaveOccurred())
			Expect(groupsWith(d, "extra")).To(Equal(want))
		},
		Entry("no rules: everywhere", "", []string{"api", "db", "smoke"}),
		Entry("include jobs: any listed job", "  include: {jobs: [{name: store, release: data}, {name: check, release: web}]}", []string{"db", "smoke"}),
		Entry("include jobs: the release must match too", "  include: {jobs: [{name: store, release: web}]}", nil),
		Entry("include deployments", "  include: {deployments: [demo]}", []string{"api", "db", "smoke"}),
		Entry("include other deployment", "  include: {deployments: [other]}", nil),
		Entry("include deployments and jobs: both must hold", "  include: {deployments: [demo], jobs: [{name: server, release: web}]}", []string{"api"}),
		Entry("include stemcell os", "  include: {stemcell: [{os: windows2019}]}", []string{"db"}),
		Entry("include networks", "  include: {networks: [default]}", []string{"api", "smoke"}),
		Entry("include teams of the deployment", "  include: {teams: [ops]}", []string{"api", "db", "smoke"}),
		Entry("include teams not of the deployment", "  include: {teams: [dev]}", nil),
		Entry("include azs", "  include: {azs: [z2]}", []string{"db"}),
		Entry("include lifecycle", "  include: {lifecycle: errand}", []string{"smoke"}),
		Entry("include criteria combine with and", "  include: {networks: [default], lifecycle: service}", []string{"api"}),
		Entry("exclude jobs", "  exclude: {jobs: [{name: server, release: web}]}", []string{"db", "smoke"}),
		Entry("exclude stemcell os", "  exclude: {stemcell: [{os: ubuntu-jammy}]}", []string{"db"}),
		Entry("exclude teams", "  exclude: {teams: [ops]}", nil),
		Entry("exclude networks", "  exclude: {networks: [private]}", []string{"api", "smoke"}),
		Entry("empty exclude excludes nothing", "  exclude: {}", []string{"api", "db", "smoke"}),
		Entry("include and exclude", "  include: {networks: [default]}\n  exclude: {lifecycle: errand}", []string{"api"}),
		Entry("keys the director does not read filter nothing", "  include: {stemcells: [{os: windows2019}], instance_groups: [db]}", []string{"api", "db", "smoke"}),
	)

	It("lets a later addon select on a job an earlier addon placed", func() {
		rc := `
addons:
- name: first
  include: {jobs: [{name: store, release: data}]}
  jobs: [{name: agent, release: tools}]
- name: second
  include: {jobs: [{name: agent, release: tools}]}
  jobs: [{name: follower, release: tools}]
`
		d, err := place(base, rc)
		Expect(err).NotTo(HaveOccurred())
		Expect(groupsWith(d, "follower")).To(Equal([]string{"db"}))
		db, _ := d.Group("db")
		follower, _ := db.Job("follower")
		Expect(follower.Addon).To(Equal("second"))
	})

	It("gives addon jobs their own properties, else the addon's", func() {
		rc := `
addons:
- name: extra
  properties: {shared: 1}
  jobs:
  - {name: own, release: tools, properties: {mine: 2}}
  - {name: inherits, release: tools}
`
		d, err := place(base, rc)
		Expect(err).NotTo(HaveOccurred())
		api, _ := d.Group("api")
		own, _ := api.Job("own")
		inherits, _ := api.Job("inherits")
		Expect(own.Properties).To(Equal(map[string]any{"mine": 2}))
		Expect(inherits.Properties).To(Equal(map[string]any{"shared": 1}))
	})

	It("ignores teams in a deployment manifest's addon, as the director does", func() {
		d, err := place(base + "addons:\n- name: extra\n  include: {teams: [dev]}\n  jobs: [{name: extra, release: tools}]\n")
		Expect(err).NotTo(HaveOccurred())
		Expect(groupsWith(d, "extra")).To(Equal([]string{"api", "db", "smoke"}))
	})

	DescribeTable("bad input",
		func(manifest string, runtimeConfig string, want string) {
			_, err := place(manifest, runtimeConfig)
			Expect(err).To(MatchError(ContainSubstring(want)))
		},
		Entry("deployments filter in a manifest addon",
			base+"addons:\n- name: extra\n  include: {deployments: [demo]}\n  jobs: [{name: x, release: y}]\n", "",
			"Addon 'extra': a deployment manifest's addon cannot filter on deployments"),
		Entry("job filter without release", base,
			"addons:\n- name: extra\n  include: {jobs: [{name: server}]}\n  jobs: [{name: x, release: y}]\n",
			"Addon 'extra': a job in include/exclude needs both name and release, got name 'server' release ''"),
		Entry("stemcell filter without os", base,
			"addons:\n- name: extra\n  exclude: {stemcell: [{name: foo}]}\n  jobs: [{name: x, release: y}]\n",
			"Addon 'extra': a stemcell in include/exclude needs an os"),
		Entry("job landing twice", base,
			"addons:\n- name: extra\n  jobs: [{name: server, release: other}]\n",
			"Instance group 'api': job 'server' would land twice (release 'other')"),
		Entry("unknown stemcell alias",
			"name: x\nstemcells: [{alias: default, os: a}]\ninstance_groups:\n- {name: g, stemcell: nope}\n", "",
			"Instance group 'g': stemcell 'nope' is not an alias under stemcells"),
		Entry("not YAML", "[", "", "Parsing the deployment manifest"),
		Entry("runtime config not YAML", base, "addons: [", "Parsing runtime config 1"),
	)

	Describe("the upstream CFCR v0.21.0 manifest", func() {
		It("puts kubo's flanneld and kubo-dns-aliases on the workers, and bosh-dns everywhere", func() {
			raw, err := os.ReadFile(fixture("cfcr-v0.21.0.yml"))
			Expect(err).NotTo(HaveOccurred())
			d, err := placement.Place(placement.Input{Manifest: raw})
			Expect(err).NotTo(HaveOccurred())

			worker, found := d.Group("worker")
			Expect(found).To(BeTrue())
			var names []string
			for _, j := range worker.Jobs {
				names = append(names, j.Release+"/"+j.Name)
			}
			Expect(names).To(Equal([]string{"kubo/flanneld", "docker/docker", "kubo/kubernetes-dependencies",
				"kubo/kubelet", "kubo/kube-proxy", "bosh-dns/bosh-dns", "kubo/kubo-dns-aliases"}))
			// its `stemcells:` include key is not the director's `stemcell:`, so it filters nothing
			Expect(groupsWith(d, "bosh-dns")).To(Equal([]string{"apply-addons", "master", "worker"}))
		})
	})
})

// fixture is the path of a shared upstream manifest: shared/ sits beside the checkout.
func fixture(name string) string {
	_, here, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(here), "..", "..", "..", "..", "shared", "fixtures", name)
}

var _ = Describe("Job.Variables", func() {
	It("names each referenced variable once, in order, wherever it sits in the properties", func() {
		j := placement.Job{Properties: map[string]any{
			"a": "((cert.ca))",
			"b": map[string]any{"c": []any{"x ((pass)) y", "((cert.private_key))"}},
			"d": "((/absolute/name))",
		}}
		Expect(j.Variables()).To(Equal([]string{"cert", "pass", "/absolute/name"}))
	})
})
