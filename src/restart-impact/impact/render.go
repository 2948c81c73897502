package impact

import (
	"fmt"
	"path/filepath"
	"sync"

	"github.com/flannel-dns/flannel-dns/src/director/placement"
	"github.com/flannel-dns/flannel-dns/src/jobrender"
)

// Jobs renders this release's jobs from the release directory's jobs/, for the first instance of a group (index 0).
type Jobs struct {
	dir      string
	renderer jobrender.Renderer
	mu       sync.Mutex
	loaded   map[string]jobrender.Job
}

// NewJobs renders the jobs under releaseDir/jobs with renderer.
func NewJobs(releaseDir string, renderer jobrender.Renderer) *Jobs {
	return &Jobs{dir: filepath.Join(releaseDir, "jobs"), renderer: renderer, loaded: map[string]jobrender.Job{}}
}

// Render is a Render.
func (js *Jobs) Render(d placement.Deployment, g placement.Group, j placement.Job) (map[string][]byte, error) {
	job, err := js.load(j.Name)
	if err != nil {
		return nil, err
	}
	rendered, err := js.renderer.Render(job, j.Properties, InstanceOf(d, g, 0))
	if err != nil {
		return nil, err
	}
	return rendered.Files, nil
}

func (js *Jobs) load(name string) (jobrender.Job, error) {
	js.mu.Lock()
	defer js.mu.Unlock()
	if job, found := js.loaded[name]; found {
		return job, nil
	}
	job, err := jobrender.LoadJob(filepath.Join(js.dir, name))
	if err != nil {
		return jobrender.Job{}, err
	}
	js.loaded[name] = job
	return job, nil
}

// InstanceOf is the director's view of instance index of g, with made-up ids and addresses that depend on
// nothing but the group and the index, so that two manifests are compared on what they say and nothing else.
func InstanceOf(d placement.Deployment, g placement.Group, index int) jobrender.Instance {
	in := jobrender.Instance{
		Group:      g.Name,
		ID:         fmt.Sprintf("00000000-0000-4000-8000-%012d", index),
		Index:      index,
		Deployment: d.Name,
		Bootstrap:  index == 0,
		Networks:   map[string]jobrender.Network{},
	}
	if len(g.AZs) > 0 {
		in.AZ = g.AZs[index%len(g.AZs)]
	}
	for i, name := range g.Networks {
		in.Networks[name] = jobrender.Network{IP: fmt.Sprintf("192.0.2.%d", 10+20*i+index%20), Netmask: "255.255.255.0", Gateway: "192.0.2.1"}
	}
	if len(g.Networks) > 0 {
		in.Address = fmt.Sprintf("%s.%s.%s.%s.bosh", in.ID, g.Name, g.Networks[0], d.Name)
	}
	return in
}
