package director

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"sync"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
	boshlog "github.com/cloudfoundry/bosh-utils/logger"

	"github.com/flannel-dns/flannel-dns/src/director/placement"
	"github.com/flannel-dns/flannel-dns/src/e2e/agent"
	"github.com/flannel-dns/flannel-dns/src/jobrender"
)

// Releases renders the jobs that a placed deployment lands on an instance's group, for every job whose
// release it has (Dirs: release name -> that release's jobs/ directory). A job of any other release (kubo's
// kubelet, say) is not rendered and Skipped names it: the simulated VMs do not run it.
type Releases struct {
	Placed placement.Deployment
	Dirs   map[string]string
	// Partial names releases of which Dirs holds only some jobs (a stand-in): their other jobs are skipped.
	Partial map[string]bool
	Network Network
	// Links, when set, is what the director hands the jobs of an instance as link data (spec.links).
	Links func(Instance) map[string]interface{}

	once     sync.Once
	renderer jobrender.Renderer
	mu       sync.Mutex
	loaded   map[string]jobrender.Job
	skipped  map[string]bool
	// rendered remembers what a job rendered for a context (properties and instance): rendering is a ruby
	// process per template, and a deploy renders every instance again.
	rendered map[string]map[string][]byte
}

// Network is the instances' BOSH network as spec.networks shows it.
type Network struct {
	Name, Netmask, Gateway string
}

// Render renders every job of inst's group that a release here has, in the group's order.
func (r *Releases) Render(inst Instance) ([]agent.Job, error) {
	r.once.Do(func() {
		r.renderer = jobrender.NewRenderer(boshlog.NewLogger(boshlog.LevelNone))
		r.loaded, r.skipped, r.rendered = map[string]jobrender.Job{}, map[string]bool{}, map[string]map[string][]byte{}
	})
	group, ok := r.Placed.Group(inst.Group)
	if !ok {
		return nil, bosherr.Errorf("The manifest has no instance group '%s'", inst.Group)
	}
	var jobs []agent.Job
	for _, j := range group.Jobs {
		spec, ok, err := r.load(j)
		if err != nil || !ok {
			if err != nil {
				return nil, err
			}
			continue
		}
		files, err := r.render(spec, j, r.instance(inst))
		if err != nil {
			return nil, err
		}
		jobs = append(jobs, agent.Job{Name: j.Name, Files: files, Packages: spec.Packages})
	}
	return jobs, nil
}

func (r *Releases) render(spec jobrender.Job, j placement.Job, inst jobrender.Instance) (map[string][]byte, error) {
	context, err := json.Marshal([]any{j.Release, j.Name, j.Properties, inst})
	if err != nil {
		return nil, bosherr.WrapErrorf(err, "Describing the context of job %s", j.Name)
	}
	key := string(context)
	r.mu.Lock()
	files, ok := r.rendered[key]
	r.mu.Unlock()
	if ok {
		return files, nil
	}
	rendered, err := r.renderer.Render(spec, j.Properties, inst)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.rendered[key] = rendered.Files
	r.mu.Unlock()
	return rendered.Files, nil
}

// Skipped names the placed jobs (release/job) that no release here has.
func (r *Releases) Skipped() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var names []string
	for name := range r.skipped {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

func (r *Releases) load(j placement.Job) (jobrender.Job, bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	key := j.Release + "/" + j.Name
	if spec, ok := r.loaded[key]; ok {
		return spec, true, nil
	}
	dir, ok := r.Dirs[j.Release]
	if _, err := os.Stat(filepath.Join(dir, j.Name)); !ok || (r.Partial[j.Release] && os.IsNotExist(err)) {
		r.skipped[key] = true
		return jobrender.Job{}, false, nil
	}
	spec, err := jobrender.LoadJob(filepath.Join(dir, j.Name))
	if err != nil {
		return jobrender.Job{}, false, err
	}
	r.loaded[key] = spec
	return spec, true, nil
}

func (r *Releases) instance(inst Instance) jobrender.Instance {
	ri := jobrender.Instance{Group: inst.Group, ID: inst.ID, Index: inst.Index, AZ: inst.AZ,
		Address: inst.Address, Deployment: r.Placed.Name, Bootstrap: inst.Bootstrap,
		Networks: map[string]jobrender.Network{r.Network.Name: {IP: inst.Address, Netmask: r.Network.Netmask, Gateway: r.Network.Gateway}}}
	if r.Links != nil {
		ri.Links = r.Links(inst)
	}
	return ri
}
