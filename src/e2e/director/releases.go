package director

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"

	"github.com/flannel-dns/flannel-dns/src/director/links"
	"github.com/flannel-dns/flannel-dns/src/director/placement"
	"github.com/flannel-dns/flannel-dns/src/director/templates"
	"github.com/flannel-dns/flannel-dns/src/e2e/agent"
	"github.com/flannel-dns/flannel-dns/src/jobrender"
)

// Releases renders every job that a placed deployment lands on an instance's group with the director's own
// template code and the links the director would resolve. Every release the manifest names must be here.
type Releases struct {
	Placed placement.Deployment
	// Dirs: release name -> that release's jobs/ directory and version.
	Dirs map[string]Release
	// Runs tells which jobs the simulated VMs run; the others are rendered for the configuration hash only.
	Runs    func(release, job string) bool
	Network Network
	// Templates runs the director's template code.
	Templates templates.Renderer

	mu       sync.Mutex
	specs    map[string]jobrender.Job
	resolved links.Resolved
	// rendered remembers what an instance rendered for a request: a deploy renders every instance again.
	rendered map[[32]byte][]map[string][]byte
}

// Release is where a release's jobs are, and its version as spec.release shows it.
type Release struct {
	Jobs, Version string
	// Packages are its compiled packages by name, where it has them here (nil: the agent's own). Another
	// directory for a package a job names updates the instance, as a new package version does on BOSH.
	Packages map[string]string
}

// Pick is the upload of a release that a manifest names at version, as the director looks it up: "latest" is
// the last one uploaded (the highest version, as uploads here come in ascending order).
func Pick(name, version string, uploaded []Release) (Release, error) {
	if len(uploaded) == 0 {
		return Release{}, bosherr.Errorf("Release '%s' doesn't exist", name)
	}
	if version == "latest" {
		return uploaded[len(uploaded)-1], nil
	}
	for _, r := range uploaded {
		if r.Version == version {
			return r, nil
		}
	}
	return Release{}, bosherr.Errorf("Release version '%s/%s' doesn't exist", name, version)
}

// Network is the instances' BOSH network as spec.networks shows it.
type Network struct {
	Name, Netmask, Gateway string
}

// Render renders every job of inst's group, in the group's order, with link data from the deployment's
// instances; those the VMs do not run are RenderedOnly.
func (r *Releases) Render(inst Instance, deployment []Instance) ([]agent.Job, error) {
	group, ok := r.Placed.Group(inst.Group)
	if !ok {
		return nil, bosherr.Errorf("The manifest has no instance group '%s'", inst.Group)
	}
	resolved, err := r.links()
	if err != nil {
		return nil, err
	}
	var jobs []templates.Job
	for _, j := range group.Jobs {
		spec, _, err := r.spec(j.Release, j.Name)
		if err != nil {
			return nil, err
		}
		jobs = append(jobs, templates.Job{Spec: spec, Release: templates.Release{Name: j.Release, Version: r.Dirs[j.Release].Version},
			Properties: j.Properties, Links: r.linkSpecs(resolved.For(inst.Group, j.Name), deployment)})
	}
	files, err := r.render(r.instance(inst), jobs)
	if err != nil {
		return nil, err
	}
	rendered := make([]agent.Job, len(group.Jobs))
	for i, j := range group.Jobs {
		rendered[i] = agent.Job{Name: j.Name, Files: files[i], Packages: jobs[i].Spec.Packages,
			PackageDirs: packageDirs(r.Dirs[j.Release].Packages, jobs[i].Spec.Packages), RenderedOnly: !r.Runs(j.Release, j.Name)}
	}
	return rendered, nil
}

// packageDirs are the directories of the packages a job names, of those its release has here.
func packageDirs(compiled map[string]string, names []string) map[string]string {
	dirs := map[string]string{}
	for _, name := range names {
		if dir, ok := compiled[name]; ok {
			dirs[name] = dir
		}
	}
	return dirs
}

func (r *Releases) render(inst templates.Instance, jobs []templates.Job) ([]map[string][]byte, error) {
	request, err := json.Marshal([]any{inst, jobs})
	if err != nil {
		return nil, bosherr.WrapErrorf(err, "Describing what %s/%d renders", inst.Group, inst.Index)
	}
	key := sha256.Sum256(request)
	r.mu.Lock()
	files, ok := r.rendered[key]
	r.mu.Unlock()
	if ok {
		return files, nil
	}
	if files, err = r.Templates.Render(inst, jobs); err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.rendered[key] = files
	r.mu.Unlock()
	return files, nil
}

// links resolves the deployment's links once.
func (r *Releases) links() (links.Resolved, error) {
	r.mu.Lock()
	if r.resolved != nil {
		defer r.mu.Unlock()
		return r.resolved, nil
	}
	r.mu.Unlock()
	resolved, err := links.Resolve(r.Placed, r.spec)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.resolved = resolved
	return resolved, nil
}

// linkSpecs is spec.links of one job: each consumed link with the provider group's instances now.
func (r *Releases) linkSpecs(consumed map[string]*links.Provider, deployment []Instance) map[string]any {
	specs := map[string]any{}
	for name, p := range consumed {
		var instances []links.Instance
		for _, inst := range deployment {
			if inst.Group == p.Group {
				instances = append(instances, links.Instance{Name: inst.Group, Index: inst.Index, ID: inst.ID,
					AZ: inst.AZ, Address: r.address(inst), Bootstrap: inst.Bootstrap})
			}
		}
		specs[name] = p.Spec(r.Placed.Name, r.Network.Name, instances)
	}
	return specs
}

// address is an instance's address as links and spec.address give it: its BOSH DNS name, as the CFCR
// manifests set features.use_dns_addresses.
func (r *Releases) address(inst Instance) string {
	return fmt.Sprintf("%s.%s.%s.%s.bosh", inst.ID, inst.Group, r.Network.Name, r.Placed.Name)
}

func (r *Releases) spec(release, job string) (jobrender.Job, bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.specs == nil {
		r.specs, r.rendered = map[string]jobrender.Job{}, map[[32]byte][]map[string][]byte{}
	}
	key := release + "/" + job
	if spec, ok := r.specs[key]; ok {
		return spec, true, nil
	}
	dir, ok := r.Dirs[release]
	if !ok {
		return jobrender.Job{}, false, bosherr.Errorf("Release '%s' (job '%s') is not here", release, job)
	}
	spec, err := jobrender.LoadJob(filepath.Join(dir.Jobs, job))
	if err != nil {
		return jobrender.Job{}, false, err
	}
	r.specs[key] = spec
	return spec, true, nil
}

func (r *Releases) instance(inst Instance) templates.Instance {
	return templates.Instance{Deployment: r.Placed.Name, Group: inst.Group, Index: inst.Index, ID: inst.ID,
		AZ: inst.AZ, Bootstrap: inst.Bootstrap, Address: r.address(inst), IP: inst.Address,
		Network:        templates.Network{Name: r.Network.Name, Netmask: r.Network.Netmask, Gateway: r.Network.Gateway},
		PersistentDisk: persistentDisk(inst)}
}

// persistentDisk is spec.persistent_disk: the disk's size in MiB, 0 without one. The size does not matter to
// the jobs here, only whether there is one.
func persistentDisk(inst Instance) int {
	if inst.PersistentDisk {
		return 5120
	}
	return 0
}
