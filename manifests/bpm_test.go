package manifests_test

import (
	"path/filepath"
	"regexp"
	"slices"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/flannel-dns/flannel-dns/src/director/interpolate"
	"github.com/flannel-dns/flannel-dns/src/director/placement"
	"github.com/flannel-dns/flannel-dns/src/jobrender"
	"github.com/flannel-dns/flannel-dns/src/restart-impact/impact"
)

// bpmBinary is what the monit file of a job that runs under bpm calls: the bpm job's own wrapper.
var bpmBinary = regexp.MustCompile(`/var/vcap/jobs/bpm/bin/bpm\b`)

// bpmPlacement is, for one manifest, every instance group that carries a flannel-dns job whose monit calls
// bpm, and those of them that lack the bpm job.
type bpmPlacement struct {
	managed []string
	missing []string
}

// placeBPM renders the monit file of each flannel-dns job on each instance group, with that group's
// properties, to see which jobs need bpm, rather than trusting a list of job names.
func placeBPM(v view) bpmPlacement {
	var p bpmPlacement
	for _, g := range v.Groups {
		for _, j := range g.Jobs {
			if j.Release != impact.Release || !callsBPM(v, g, j) {
				continue
			}
			p.managed = append(p.managed, g.Name+"/"+j.Name)
			if !g.HasJob("bpm", "bpm") && !slices.Contains(p.missing, g.Name) {
				p.missing = append(p.missing, g.Name)
			}
		}
	}
	return p
}

func callsBPM(v view, g placement.Group, j placement.Job) bool {
	job, err := jobrender.LoadJob(filepath.Join(repoRoot, "jobs", j.Name))
	Expect(err).NotTo(HaveOccurred())
	monit, err := renderer.RenderFile(job, jobrender.MonitPath, j.Properties, impact.InstanceOf(v.Deployment, g, 0))
	Expect(err).NotTo(HaveOccurred(), "rendering the monit file of %s on %s", j.Name, g.Name)
	return bpmBinary.Match(monit)
}

func releaseNames(v view) []string {
	var names []string
	for _, r := range v.Releases {
		names = append(names, r.Name)
	}
	return names
}

var _ = Describe("bpm beside flannel-dns's bpm-managed jobs", func() {
	type deployment struct {
		name     string
		manifest func(more ...string) []byte
	}
	deployments := []deployment{{
		name: "the standalone example",
		manifest: func(more ...string) []byte {
			raw, err := interpolate.Manifest(bosh, example(), more...)
			Expect(err).NotTo(HaveOccurred())
			return raw
		},
	}}
	for _, f := range fixtures {
		deployments = append(deployments, deployment{name: f.file + " with flannel-dns", manifest: f.adopted})
	}

	for _, d := range deployments {
		It(d.name+": every instance group with a job whose monit calls bpm carries the bpm job, from a release the manifest names", func() {
			v := viewOf(d.manifest())
			p := placeBPM(v)
			Expect(p.managed).To(ContainElement(HaveSuffix("/flanneld")), "flanneld's monit calls bpm, so it must be found")
			Expect(p.missing).To(BeEmpty())
			Expect(releaseNames(v)).To(ContainElement("bpm"))
		})
	}

	It("finds a group that lacks bpm (the check can fail)", func() {
		raw, err := interpolate.Manifest(bosh, example(), writeOps("- {type: remove, path: /instance_groups/name=node/jobs/name=bpm}\n"))
		Expect(err).NotTo(HaveOccurred())
		Expect(placeBPM(viewOf(raw)).missing).To(ConsistOf("node"))
	})

	for _, f := range fixtures {
		It(f.file+": adds bpm to the workers, which lack it, and leaves the masters' own bpm job as it was", func() {
			raw, err := interpolate.Manifest(bosh, f.path())
			Expect(err).NotTo(HaveOccurred())
			before, after := viewOf(raw), viewOf(f.adopted())
			Expect(groupOf(before, "worker").HasJob("bpm", "bpm")).To(BeFalse())
			Expect(groupOf(after, "worker").HasJob("bpm", "bpm")).To(BeTrue())
			Expect(job(groupOf(after, "master"), "bpm")).To(Equal(job(groupOf(before, "master"), "bpm")))
		})
	}
})
