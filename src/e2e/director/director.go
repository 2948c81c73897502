// Package director plays the BOSH director's part in a deploy: it renders every job that lands on every
// instance and compares each instance's configuration hash with the one of the previous deploy. Changed:
// updated. Same: left alone. New or gone instance IDs: created or deleted.
package director

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"

	"github.com/flannel-dns/flannel-dns/src/e2e/agent"
)

// Instance is what a job's templates may see of the instance they render for.
type Instance struct {
	Group     string
	Index     int
	ID        string
	Address   string
	AZ        string
	Bootstrap bool
	// PersistentDisk tells whether the instance has a persistent disk.
	PersistentDisk bool
}

// Name is the group/index name that the director's output shows.
func (i Instance) Name() string { return fmt.Sprintf("%s/%d", i.Group, i.Index) }

// Renderer renders every job that lands on an instance, in the order the agent starts them, with the link
// data of the deployment's instances: the jobs the simulated VMs run, and those only rendered (RenderedOnly:
// kubo's kubelet, say), which count for the configuration hash as on BOSH but are not run.
type Renderer interface {
	Render(instance Instance, deployment []Instance) ([]agent.Job, error)
}

// Rendered is every job of one instance, rendered, and the configuration hash over them.
type Rendered struct {
	Instance Instance
	Jobs     []agent.Job
	Hash     string
}

// Plan is the outcome of one deploy: what every instance renders (by instance ID) and what the
// director does (instance names).
type Plan struct {
	Rendered map[string]Rendered
	Created  []string
	Updated  []string
	Deleted  []string
}

// Deploy renders every instance and compares it with the previous plan (nil on the first deploy).
func Deploy(r Renderer, instances []Instance, previous *Plan) (*Plan, error) {
	plan := &Plan{Rendered: map[string]Rendered{}}
	for _, inst := range instances {
		jobs, err := r.Render(inst, instances)
		if err != nil {
			return nil, bosherr.WrapErrorf(err, "Rendering the jobs of %s", inst.Name())
		}
		rendered := Rendered{Instance: inst, Jobs: jobs, Hash: hash(jobs)}
		plan.Rendered[inst.ID] = rendered
		switch {
		case previous == nil || !previous.has(inst.ID):
			plan.Created = append(plan.Created, inst.Name())
		case previous.Rendered[inst.ID].Hash != rendered.Hash:
			plan.Updated = append(plan.Updated, inst.Name())
		}
	}
	if previous != nil {
		for id, old := range previous.Rendered {
			if !plan.has(id) {
				plan.Deleted = append(plan.Deleted, old.Instance.Name())
			}
		}
	}
	sort.Strings(plan.Created)
	sort.Strings(plan.Updated)
	sort.Strings(plan.Deleted)
	return plan, nil
}

// IsUpdated tells whether the plan updates the instance named name.
func (p *Plan) IsUpdated(name string) bool {
	i := sort.SearchStrings(p.Updated, name)
	return i < len(p.Updated) && p.Updated[i] == name
}

// Of is what the plan renders for the instance called name (group/index).
func (p *Plan) Of(name string) (Rendered, bool) {
	for _, r := range p.Rendered {
		if r.Instance.Name() == name {
			return r, true
		}
	}
	return Rendered{}, false
}

func (p *Plan) has(id string) bool {
	_, ok := p.Rendered[id]
	return ok
}

func hash(jobs []agent.Job) string {
	h := sha256.New()
	for _, job := range jobs {
		h.Write([]byte(job.Name + "\x00"))
		for _, dest := range sortedKeys(job.Files) {
			h.Write([]byte(dest + "\x00"))
			h.Write(job.Files[dest])
			h.Write([]byte("\x00"))
		}
		for _, name := range sortedKeys(job.PackageDirs) {
			h.Write([]byte(name + "=" + job.PackageDirs[name] + "\x00"))
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

func sortedKeys[V any](files map[string]V) []string {
	keys := make([]string, 0, len(files))
	for k := range files {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
