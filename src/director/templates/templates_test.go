package templates_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/flannel-dns/flannel-dns/src/director/templates"
	"github.com/flannel-dns/flannel-dns/src/jobrender"
)

var _ = Describe("Renderer", func() {
	var (
		renderer templates.Renderer
		web      templates.Job
		inst     templates.Instance
	)

	BeforeEach(func() {
		renderer = templates.Renderer{Lib: lib}
		spec, err := jobrender.LoadJob("testdata/jobs/web")
		Expect(err).NotTo(HaveOccurred())
		web = templates.Job{Spec: spec, Release: templates.Release{Name: "shop", Version: "3"},
			Properties: map[string]any{"undeclared": "visible"},
			Links: map[string]any{"db": map[string]any{
				"instances": []any{
					map[string]any{"name": "db", "index": 0, "id": "aaa", "az": "z1", "address": "aaa.db.default.shop.bosh", "bootstrap": true},
					map[string]any{"name": "db", "index": 2, "id": "ccc", "az": "z2", "address": "ccc.db.default.shop.bosh", "bootstrap": false},
				},
				"properties":     map[string]any{"db": map[string]any{"user": "admin", "port": 5432}},
				"instance_group": "db", "default_network": "default", "deployment_name": "shop", "domain": "bosh"}}}
		inst = templates.Instance{Deployment: "shop", Group: "web", Index: 1, ID: "bbb", AZ: "z2",
			Address: "bbb.web.default.shop.bosh", IP: "192.0.2.11",
			Network: templates.Network{Name: "default", Netmask: "255.255.255.0", Gateway: "192.0.2.1"}}
	})

	render := func(jobs ...templates.Job) map[string][]byte {
		files, err := renderer.Render(inst, jobs)
		Expect(err).NotTo(HaveOccurred())
		Expect(files).To(HaveLen(len(jobs)))
		return files[0]
	}

	It("hands link() the provider's instances, its properties and its group query", func() {
		Expect(string(render(web)["config/peers"])).To(Equal(
			"db/0 aaa aaa.db.default.shop.bosh az=z1 bootstrap=true\n" +
				"db/2 ccc ccc.db.default.shop.bosh az=z2 bootstrap=false\n" +
				"group=q-s0.db.default.shop.bosh\n" +
				"user=admin port=5432\n" +
				"no cache\n"))
	})

	It("takes the if_link branch when the optional link is there", func() {
		web.Links["cache"] = map[string]any{"instances": []any{map[string]any{"name": "cache", "index": 0}},
			"instance_group": "cache", "default_network": "default", "deployment_name": "shop", "domain": "bosh"}
		Expect(string(render(web)["config/peers"])).To(HaveSuffix("cache=1\n"))
	})

	It("binds only the spec's properties, with its defaults, and describes the instance", func() {
		Expect(string(render(web)["config/settings"])).To(Equal(
			"port=8080 name=unnamed undeclared=hidden\n" +
				"me=web/1 bbb bootstrap=false address=bbb.web.default.shop.bosh ip=192.0.2.11\n" +
				"network=default release=shop/3\n"))
	})

	It("renders the monit file with the rest", func() {
		Expect(string(render(web)[jobrender.MonitPath])).To(HavePrefix("check process web-1\n"))
	})

	It("renders several jobs in one go, each with its own properties", func() {
		other := web
		other.Properties = map[string]any{"port": 9090}
		files, err := renderer.Render(inst, []templates.Job{web, other})
		Expect(err).NotTo(HaveOccurred())
		Expect(string(files[0]["config/settings"])).To(HavePrefix("port=8080 "))
		Expect(string(files[1]["config/settings"])).To(HavePrefix("port=9090 "))
	})

	It("fails naming the job, the template, its line and the message", func() {
		web.Properties = map[string]any{"break": true}
		_, err := renderer.Render(inst, []templates.Job{web})
		Expect(err).To(MatchError(And(ContainSubstring("web/1"), ContainSubstring("job 'web'"),
			ContainSubstring("'broken.erb' (line 1: break is set)"))))
	})

	It("fails when a consumed link is missing, as the director does", func() {
		delete(web.Links, "db")
		_, err := renderer.Render(inst, []templates.Job{web})
		Expect(err).To(MatchError(And(ContainSubstring("'peers.erb'"), ContainSubstring("db"))))
	})

	It("names the library when the director's code is not there", func() {
		renderer.Lib = GinkgoT().TempDir()
		_, err := renderer.Render(inst, []templates.Job{web})
		Expect(err).To(MatchError(ContainSubstring(renderer.Lib)))
	})
})
