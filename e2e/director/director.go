// Package director plays the BOSH director's part in deciding which instances a deploy updates: it
// renders every job of every instance and compares each instance's configuration hash with the one
// from the previous deploy. Changed: updated (its processes restart). Same: left alone.
package director

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
)

// Instance is what a job's templates may see of the instance they render for.
type Instance struct {
	Group     string
	Index     int
	ID        string
	Address   string
	Bootstrap bool
	Jobs      []string
}

// Name is the group/index name that the director's output shows.
func (i Instance) Name() string { return fmt.Sprintf("%s/%d", i.Group, i.Index) }

// Files maps a rendered file's destination (relative to the job's directory) to its content.
type Files map[string][]byte

// Renderer renders one job for one instance.
type Renderer interface {
	Render(job string, instance Instance) (Files, error)
}

// Rendered is every job of one instance, rendered, and the configuration hash over all of it.
type Rendered struct {
	Instance Instance
	Jobs     map[string]Files
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
		rendered, err := render(r, inst)
		if err != nil {
			return nil, err
		}
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

func (p *Plan) has(id string) bool {
	_, ok := p.Rendered[id]
	return ok
}

func render(r Renderer, inst Instance) (Rendered, error) {
	rendered := Rendered{Instance: inst, Jobs: map[string]Files{}}
	h := sha256.New()
	for _, job := range inst.Jobs {
		files, err := r.Render(job, inst)
		if err != nil {
			return Rendered{}, bosherr.WrapErrorf(err, "Rendering job %s for %s", job, inst.Name())
		}
		rendered.Jobs[job] = files
		h.Write([]byte(job + "\x00"))
		for _, dest := range sortedKeys(files) {
			h.Write([]byte(dest + "\x00"))
			h.Write(files[dest])
			h.Write([]byte("\x00"))
		}
	}
	rendered.Hash = hex.EncodeToString(h.Sum(nil))
	return rendered, nil
}

func sortedKeys(files Files) []string {
	keys := make([]string, 0, len(files))
	for k := range files {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
