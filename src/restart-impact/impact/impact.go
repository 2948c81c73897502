// Package impact compares two placements of a deployment and tells, per instance group, what would make BOSH
// update its existing instances: jobs of this release that render differently (rendered for real), other jobs
// whose manifest entries differ, and jobs known to render other instances' addresses while a group changes size.
package impact

import (
	"bytes"
	"maps"
	"reflect"
	"slices"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"

	"github.com/flannel-dns/flannel-dns/src/director/placement"
)

// Release is the release whose jobs are rendered.
const Release = "flannel-dns"

// Lister is a job known to iterate a link's instances in its templates, so that its rendered output changes
// whenever the linked group gains or loses instances.
type Lister struct {
	Release string
	Job     string
}

// InstanceListers are the upstream jobs of CFCR deployments known to list other instances (kubo v0.21/v0.32,
// cfcr-etcd 1.x).
var InstanceListers = []Lister{
	{Release: "kubo", Job: "flanneld"},
	{Release: "kubo", Job: "kubo-dns-aliases"},
	{Release: "kubo", Job: "kube-apiserver"},
	{Release: "kubo", Job: "route-sync"},
	{Release: "kubo", Job: "apply-specs"},
	{Release: "cfcr-etcd", Job: "etcd"},
}

// IsLister tells whether j is one of InstanceListers.
func IsLister(j placement.Job) bool {
	return slices.Contains(InstanceListers, Lister{Release: j.Release, Job: j.Name})
}

// Render renders one job of this release as it lands on group g of deployment d: destination path -> content.
type Render func(d placement.Deployment, g placement.Group, j placement.Job) (map[string][]byte, error)

// Group is what differs for one instance group.
type Group struct {
	Name string
	// Added and Removed: the group exists in only one of the two manifests.
	Added, Removed bool
	// Errand: no VM runs between the errand's runs, so differences only show at its next run.
	Errand    bool
	Instances [2]int
	// Rendered lists this release's jobs whose templates differ, with the files.
	Rendered []JobFiles
	// Entries names other releases' jobs whose manifest entries (presence, release, properties) differ.
	Entries []string
	// Listers names jobs on the group that list other instances, when some group changes size.
	Listers []string
	// Variables names variables whose definitions changed and that the group's jobs use.
	Variables []string
}

// JobFiles is one job of this release and the files that differ ("(added)"/"(removed)" for the whole job).
type JobFiles struct {
	Job   string
	Files []string
}

// Differs tells whether anything of the group's jobs differs.
func (g Group) Differs() bool {
	return len(g.Rendered)+len(g.Entries)+len(g.Listers)+len(g.Variables) > 0
}

// Restarts tells whether existing instances of the group would be updated.
func (g Group) Restarts() bool {
	return !g.Errand && g.Differs()
}

// Compare returns one Group per instance group of old and new, in manifest order. variables maps group names to
// the changed variables they use (see VariableUse); nil when not known.
func Compare(old, new placement.Deployment, render Render, variables map[string][]string) ([]Group, error) {
	resized := sizesDiffer(old, new)
	var out []Group
	for _, name := range groupNames(old, new) {
		o, inOld := old.Group(name)
		n, inNew := new.Group(name)
		g := Group{Name: name, Added: !inOld, Removed: !inNew, Instances: [2]int{o.Instances, n.Instances}}
		g.Errand = inNew && n.Lifecycle == "errand" || !inNew && o.Lifecycle == "errand"
		if inOld && inNew {
			var err error
			if g.Rendered, err = renderedDiff(old, new, o, n, render); err != nil {
				return nil, err
			}
			g.Entries = entryDiff(o, n)
			if resized {
				g.Listers = listers(n)
			}
			g.Variables = variables[name]
		}
		out = append(out, g)
	}
	return out, nil
}

func groupNames(old, new placement.Deployment) []string {
	var names []string
	for _, d := range []placement.Deployment{old, new} {
		for _, g := range d.Groups {
			if !slices.Contains(names, g.Name) {
				names = append(names, g.Name)
			}
		}
	}
	return names
}

func sizesDiffer(old, new placement.Deployment) bool {
	for _, name := range groupNames(old, new) {
		o, inOld := old.Group(name)
		n, inNew := new.Group(name)
		if inOld != inNew || o.Instances != n.Instances {
			return true
		}
	}
	return false
}

func renderedDiff(old, new placement.Deployment, o, n placement.Group, render Render) ([]JobFiles, error) {
	var out []JobFiles
	for _, name := range jobNames(o, n, func(j placement.Job) bool { return j.Release == Release }) {
		oj, inOld := releaseJob(o, name)
		nj, inNew := releaseJob(n, name)
		switch {
		case !inOld:
			out = append(out, JobFiles{Job: name, Files: []string{"(added)"}})
		case !inNew:
			out = append(out, JobFiles{Job: name, Files: []string{"(removed)"}})
		default:
			files, err := filesDiff(old, new, o, n, oj, nj, render)
			if err != nil {
				return nil, err
			}
			if len(files) > 0 {
				out = append(out, JobFiles{Job: name, Files: files})
			}
		}
	}
	return out, nil
}

func filesDiff(old, new placement.Deployment, o, n placement.Group, oj, nj placement.Job, render Render) ([]string, error) {
	before, err := render(old, o, oj)
	if err != nil {
		return nil, bosherr.WrapErrorf(err, "Rendering job '%s' of instance group '%s' in the old manifest", oj.Name, o.Name)
	}
	after, err := render(new, n, nj)
	if err != nil {
		return nil, bosherr.WrapErrorf(err, "Rendering job '%s' of instance group '%s' in the new manifest", nj.Name, n.Name)
	}
	var files []string
	for _, path := range slices.Sorted(maps.Keys(union(before, after))) {
		b, inBefore := before[path]
		a, inAfter := after[path]
		if inBefore != inAfter || !bytes.Equal(a, b) {
			files = append(files, path)
		}
	}
	return files, nil
}

func union(a, b map[string][]byte) map[string][]byte {
	u := maps.Clone(a)
	maps.Copy(u, b)
	return u
}

func releaseJob(g placement.Group, name string) (placement.Job, bool) {
	j, found := g.Job(name)
	return j, found && j.Release == Release
}

// entryDiff compares the other releases' jobs as the manifest gives them: they are not rendered here.
func entryDiff(o, n placement.Group) []string {
	var out []string
	for _, name := range jobNames(o, n, func(j placement.Job) bool { return j.Release != Release }) {
		oj, inOld := o.Job(name)
		nj, inNew := n.Job(name)
		if inOld != inNew || oj.Release != nj.Release || !reflect.DeepEqual(oj.Properties, nj.Properties) {
			out = append(out, name)
		}
	}
	return out
}

func jobNames(o, n placement.Group, keep func(placement.Job) bool) []string {
	var names []string
	for _, g := range []placement.Group{o, n} {
		for _, j := range g.Jobs {
			if keep(j) && !slices.Contains(names, j.Name) {
				names = append(names, j.Name)
			}
		}
	}
	return names
}

func listers(g placement.Group) []string {
	var out []string
	for _, j := range g.Jobs {
		if IsLister(j) {
			out = append(out, j.Release+"/"+j.Name)
		}
	}
	return out
}
