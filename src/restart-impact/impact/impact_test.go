package impact_test

import (
	"os"
	"path/filepath"
	"strings"

	boshlog "github.com/cloudfoundry/bosh-utils/logger"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/flannel-dns/flannel-dns/src/director/placement"
	"github.com/flannel-dns/flannel-dns/src/jobrender"
	"github.com/flannel-dns/flannel-dns/src/restart-impact/impact"
)

const manifest = `
name: demo
stemcells: [{alias: default, os: ubuntu-jammy}]
instance_groups:
- name: front
  instances: 2
  azs: [z1]
  networks: [{name: default}]
  stemcell: default
  jobs:
  - {name: demo, release: flannel-dns, properties: {port: 1}}
  - {name: web, release: other, properties: {color: blue}}
- name: back
  instances: 3
  azs: [z1]
  networks: [{name: default}]
  stemcell: default
  jobs:
  - {name: demo, release: flannel-dns, properties: {port: 1}}
  - {name: flanneld, release: kubo}
`

// writeRelease lays out a release with one job, demo, whose config renders its port property and the
// instance's index.
func writeRelease() string {
	dir := GinkgoT().TempDir()
	job := filepath.Join(dir, "jobs", "demo")
	Expect(os.MkdirAll(filepath.Join(job, "templates"), 0o755)).To(Succeed())
	files := map[string]string{
		"spec":                 "name: demo\ntemplates:\n  config.erb: config/demo.conf\nproperties:\n  port: {default: 80}\n",
		"monit":                "check process demo\n",
		"templates/config.erb": "port=<%= p('port') %> index=<%= spec.index %>\n",
	}
	for name, content := range files {
		Expect(os.WriteFile(filepath.Join(job, name), []byte(content), 0o644)).To(Succeed())
	}
	return dir
}

func placed(m string) placement.Deployment {
	d, err := placement.Place(placement.Input{Manifest: []byte(m)})
	Expect(err).NotTo(HaveOccurred())
	return d
}

var _ = Describe("Compare", func() {
	var jobs *impact.Jobs

	BeforeEach(func() {
		jobs = impact.NewJobs(writeRelease(), jobrender.NewRenderer(boshlog.NewWriterLogger(boshlog.LevelError, GinkgoWriter)))
	})

	compare := func(old, new string) ([]impact.Group, string, bool) {
		groups, err := impact.Compare(placed(old), placed(new), jobs.Render, nil)
		Expect(err).NotTo(HaveOccurred())
		var out strings.Builder
		updates, err := impact.Write(&out, groups)
		Expect(err).NotTo(HaveOccurred())
		return groups, out.String(), updates
	}

	It("finds nothing between a manifest and itself", func() {
		groups, out, updates := compare(manifest, manifest)
		Expect(updates).To(BeFalse())
		Expect(groups).To(HaveLen(2))
		Expect(out).To(Equal("front: no change to existing instances\nback: no change to existing instances\n"))
	})

	It("names the rendered file that a property change reaches", func() {
		groups, out, updates := compare(manifest, strings.Replace(manifest, "{port: 1}}\n  - {name: web", "{port: 2}}\n  - {name: web", 1))
		Expect(updates).To(BeTrue())
		Expect(groups[0].Rendered).To(Equal([]impact.JobFiles{{Job: "demo", Files: []string{"config/demo.conf"}}}))
		Expect(groups[1].Restarts()).To(BeFalse())
		Expect(out).To(ContainSubstring("front: existing instances would be updated\n  flannel-dns/demo renders differently: config/demo.conf\n"))
	})

	It("ignores a manifest change that renders the same bytes", func() {
		groups, _, updates := compare(manifest, strings.Replace(manifest, "{port: 1}}\n  - {name: web", "{port: 1, unused: 7}}\n  - {name: web", 1))
		Expect(updates).To(BeFalse())
		Expect(groups[0].Restarts()).To(BeFalse())
	})

	It("reports other releases' jobs whose manifest entries differ, without rendering them", func() {
		groups, out, updates := compare(manifest, strings.Replace(manifest, "color: blue", "color: red", 1))
		Expect(updates).To(BeTrue())
		Expect(groups[0].Entries).To(Equal([]string{"web"}))
		Expect(groups[0].Rendered).To(BeEmpty())
		Expect(out).To(ContainSubstring("manifest entries differ (other releases, not rendered here): web"))
	})

	It("warns about jobs that list other instances when a group changes size", func() {
		groups, out, updates := compare(manifest, strings.Replace(manifest, "instances: 2", "instances: 4", 1))
		Expect(updates).To(BeTrue())
		Expect(groups[0].Restarts()).To(BeFalse())
		Expect(groups[1].Listers).To(Equal([]string{"kubo/flanneld"}))
		Expect(out).To(ContainSubstring("front: no change to existing instances\n  instances: 2 -> 4\n"))
		Expect(out).To(ContainSubstring("back: existing instances would be updated\n  jobs that list other instances, while a group changes size: kubo/flanneld\n"))
	})

	It("reports jobs of this release added to or removed from a group", func() {
		without := strings.Replace(manifest, "  - {name: demo, release: flannel-dns, properties: {port: 1}}\n  - {name: flanneld", "  - {name: flanneld", 1)
		groups, _, _ := compare(manifest, without)
		Expect(groups[1].Rendered).To(Equal([]impact.JobFiles{{Job: "demo", Files: []string{"(removed)"}}}))
		groups, _, _ = compare(without, manifest)
		Expect(groups[1].Rendered).To(Equal([]impact.JobFiles{{Job: "demo", Files: []string{"(added)"}}}))
	})

	It("does not count an errand's differences as an update, but shows them", func() {
		errand := manifest + "- {name: once, lifecycle: errand, instances: 1, stemcell: default, networks: [{name: default}], jobs: [{name: flanneld, release: kubo}]}\n"
		groups, out, updates := compare(errand, strings.Replace(errand, "instances: 3", "instances: 4", 1))
		Expect(groups[2].Errand).To(BeTrue())
		Expect(groups[2].Restarts()).To(BeFalse())
		Expect(out).To(ContainSubstring("once: errand, no VM to update; its next run gets these differences\n  jobs that list other instances, while a group changes size: kubo/flanneld\n"))
		Expect(updates).To(BeTrue()) // back updates: it carries kubo/flanneld too
		Expect(groups[1].Restarts()).To(BeTrue())
	})

	It("reports groups that only one manifest has", func() {
		extra := manifest + "- {name: more, instances: 1, stemcell: default, networks: [{name: default}], jobs: []}\n"
		_, out, _ := compare(manifest, extra)
		Expect(out).To(HaveSuffix("more: new instance group (1 instances)\n"))
		_, out, _ = compare(extra, manifest)
		Expect(out).To(HaveSuffix("more: instance group removed\n"))
	})

	It("says which job and group failed to render", func() {
		broken := strings.Replace(manifest, "{name: demo, release: flannel-dns, properties: {port: 1}}\n  - {name: web", "{name: nosuch, release: flannel-dns}\n  - {name: web", 1)
		_, err := impact.Compare(placed(broken), placed(broken), jobs.Render, nil)
		Expect(err).To(MatchError(ContainSubstring("Rendering job 'nosuch' of instance group 'front' in the old manifest")))
	})
})

var _ = Describe("variables", func() {
	const vars = `
variables:
- {name: same, type: password}
- {name: cert, type: certificate, options: {ca: ca, alternative_names: [a]}}
- {name: gone, type: password}
`
	It("names the variables added, removed or redefined", func() {
		changed, err := impact.ChangedVariables([]byte(vars), []byte(strings.NewReplacer("[a]", "[a, b]", "- {name: gone, type: password}\n", "- {name: new, type: rsa}\n").Replace(vars)))
		Expect(err).NotTo(HaveOccurred())
		Expect(changed).To(Equal([]string{"cert", "gone", "new"}))
	})

	It("finds the groups whose jobs use them and reports them as updates", func() {
		d := placed(strings.Replace(manifest, "{color: blue}", "{color: blue, key: ((cert.private_key))}", 1))
		use := impact.VariableUse(d, []string{"cert", "other"})
		Expect(use).To(Equal(map[string][]string{"front": {"cert"}}))

		jobs := impact.NewJobs(writeRelease(), jobrender.NewRenderer(boshlog.NewWriterLogger(boshlog.LevelError, GinkgoWriter)))
		groups, err := impact.Compare(d, d, jobs.Render, use)
		Expect(err).NotTo(HaveOccurred())
		var out strings.Builder
		updates, err := impact.Write(&out, groups)
		Expect(err).NotTo(HaveOccurred())
		Expect(updates).To(BeTrue())
		Expect(out.String()).To(HavePrefix("front: existing instances would be updated\n  uses variables whose definitions differ (new values may be issued): cert\nback: no change"))
	})

	It("names a manifest it cannot parse", func() {
		_, err := impact.ChangedVariables([]byte("variables: {"), []byte(vars))
		Expect(err).To(MatchError(ContainSubstring("Parsing the old manifest's variables")))
	})
})

var _ = Describe("InstanceOf", func() {
	It("depends on the group and the index only", func() {
		d := placed(manifest)
		front, _ := d.Group("front")
		a, b := impact.InstanceOf(d, front, 1), impact.InstanceOf(d, front, 1)
		Expect(a).To(Equal(b))
		Expect(a.Address).To(Equal("00000000-0000-4000-8000-000000000001.front.default.demo.bosh"))
		Expect(a.Networks["default"].IP).To(Equal("192.0.2.11"))
		Expect(a.Bootstrap).To(BeFalse())
	})
})
