package manifests_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"runtime"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/flannel-dns/flannel-dns/src/director/interpolate"
	"github.com/flannel-dns/flannel-dns/src/director/placement"
	"github.com/flannel-dns/flannel-dns/src/jobrender"
	"github.com/flannel-dns/flannel-dns/src/restart-impact/impact"
)

var memberCounts = []int{1, 2, 3, 5, 7}

// workerState is everything BOSH would compare on one worker instance that a manifest decides: the jobs that
// land there with their properties, and the bytes of every template of this release's jobs.
type workerState struct {
	Jobs     []placement.Job
	Rendered map[string]map[string][]byte
}

var _ = Describe("scaling etcd", func() {
	// workers returns the state of every instance of every worker group, by "group/index". The renders run in
	// parallel, one per core: each is a ruby process.
	workers := func(v view) map[string]workerState {
		type task struct {
			key   string
			g     placement.Group
			index int
		}
		var tasks []task
		for _, g := range v.workers() {
			for index := range g.Instances {
				tasks = append(tasks, task{key: fmt.Sprintf("%s/%d", g.Name, index), g: g, index: index})
			}
		}
		states := make([]workerState, len(tasks))
		etcd := v.etcdGroup()
		var wg sync.WaitGroup
		slots := make(chan struct{}, runtime.NumCPU())
		for i, t := range tasks {
			wg.Add(1)
			go func() {
				defer GinkgoRecover()
				defer wg.Done()
				slots <- struct{}{}
				defer func() { <-slots }()
				states[i] = workerState{Jobs: t.g.Jobs, Rendered: render(v, t.g, t.index, etcd)}
			}()
		}
		wg.Wait()
		byKey := map[string]workerState{}
		for i, t := range tasks {
			byKey[t.key] = states[i]
		}
		return byKey
	}

	// a scaled case interpolates a manifest for a number of etcd members, with the credentials of a vars store
	// that every count shares, as the config server keeps them across deploys.
	type scaled struct {
		name     string
		manifest func(store string, etcdMembers int) []byte
	}
	cases := []scaled{{
		name: "the standalone example",
		manifest: func(store string, n int) []byte {
			raw, err := interpolate.WithVarsStore(bosh, example(), store, instancesOps("etcd", n))
			Expect(err).NotTo(HaveOccurred())
			return raw
		},
	}}
	for _, f := range fixtures {
		cases = append(cases, scaled{
			name:     f.file + " with flannel-dns",
			manifest: func(store string, n int) []byte { return f.adoptedWithCreds(store, instancesOps("master", n)) },
		})
	}

	for _, c := range cases {
		It(c.name+": every worker is the same for 1, 2, 3, 5 and 7 etcd members", func() {
			store := filepath.Join(GinkgoT().TempDir(), "creds.yml")
			var first map[string]workerState
			for _, n := range memberCounts {
				v := viewOf(c.manifest(store, n))
				Expect(v.etcdGroup().Instances).To(Equal(n))
				states := workers(v)
				for name, s := range states {
					Expect(s.Rendered).To(HaveKey("flanneld"), name)
					Expect(s.Rendered).To(HaveKey("cfcr-dns-aliases"), name)
					for _, j := range s.Jobs {
						Expect(impact.IsLister(j)).To(BeFalse(), "%s carries %s/%s", name, j.Release, j.Name)
					}
				}
				if first == nil {
					first = states
					continue
				}
				Expect(states).To(Equal(first), "%d etcd members against %d", n, memberCounts[0])
			}
		})
	}

	for _, f := range fixtures {
		It(f.file+" unmodified: workers carry kubo's flanneld and kubo-dns-aliases, which list the masters", func() {
			raw, err := interpolate.Manifest(bosh, f.path(), instancesOps("master", 5))
			Expect(err).NotTo(HaveOccurred())
			v := viewOf(raw)
			Expect(groupOf(v, "master").Instances).To(Equal(5))
			for _, g := range v.workers() {
				Expect(g.HasJob("flanneld", "kubo")).To(BeTrue(), g.Name)
				Expect(g.HasJob("kubo-dns-aliases", "kubo")).To(BeTrue(), g.Name)
				var listers []string
				for _, j := range g.Jobs {
					if impact.IsLister(j) {
						listers = append(listers, j.Name)
					}
				}
				Expect(listers).To(ConsistOf("flanneld", "kubo-dns-aliases"))
			}
		})
	}
})

// render renders this release's jobs on instance index of g. The link data holds the masters, as the director
// would put it, so that a template that read it would render differently as masters scale.
func render(v view, g placement.Group, index int, masters placement.Group) map[string]map[string][]byte {
	out := map[string]map[string][]byte{}
	for _, j := range g.Jobs {
		if j.Release == impact.Release {
			out[j.Name] = renderJob(v, g, j, index, masters)
		}
	}
	return out
}

func renderJob(v view, g placement.Group, j placement.Job, index int, masters placement.Group) map[string][]byte {
	instance := impact.InstanceOf(v.Deployment, g, index)
	instance.Links = map[string]any{"etcd": map[string]any{"instances": linkInstances(v, masters)}}
	job, err := jobrender.LoadJob(filepath.Join(repoRoot, "jobs", j.Name))
	Expect(err).NotTo(HaveOccurred())
	rendered, err := renderer.Render(job, j.Properties, instance)
	Expect(err).NotTo(HaveOccurred(), "rendering %s on %s/%d", j.Name, g.Name, index)
	return rendered.Files
}

func linkInstances(v view, g placement.Group) []any {
	var instances []any
	for index := range g.Instances {
		in := impact.InstanceOf(v.Deployment, g, index)
		instances = append(instances, map[string]any{"name": g.Name, "index": index, "id": in.ID, "address": in.Address, "az": in.AZ})
	}
	return instances
}

// renderedAliases is the dns/aliases.json that cfcr-dns-aliases renders on the first instance of g.
func renderedAliases(v view, g placement.Group) map[string][]string {
	files := renderJob(v, g, job(g, "cfcr-dns-aliases"), 0, v.etcdGroup())
	Expect(files).To(HaveKey("dns/aliases.json"))
	var aliases map[string][]string
	Expect(json.Unmarshal(files["dns/aliases.json"], &aliases)).To(Succeed())
	return aliases
}
