// Package placement works out, the way the BOSH director does, which jobs land on each instance group of a
// deployment: the instance group's own jobs, then the addons of the manifest and of the runtime configs whose
// include and exclude rules select the group.
package placement

import (
	"regexp"
	"slices"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
	"go.yaml.in/yaml/v3"
)

// Job is one job as it lands on an instance group, with the properties the director hands its templates
// (before defaults from the job's spec).
type Job struct {
	Name       string
	Release    string
	Properties map[string]any
	// Addon names the addon that placed the job; empty for the instance group's own jobs.
	Addon string
}

// Group is one instance group with every job that lands on it.
type Group struct {
	Name      string
	Instances int
	Lifecycle string
	// PersistentDisk tells whether the group's instances have a persistent disk.
	PersistentDisk bool
	AZs            []string
	Networks       []string
	OS             string
	Jobs           []Job
}

// Deployment is the placement of a whole manifest.
type Deployment struct {
	Name   string
	Groups []Group
}

// Input is what the director knows when it plans a deploy.
type Input struct {
	Manifest       []byte
	RuntimeConfigs [][]byte
	// Teams are the deployment's teams, for addons filtered on teams.
	Teams []string
}

// Place works out the jobs on every instance group of in.Manifest.
func Place(in Input) (Deployment, error) {
	var m manifest
	if err := yaml.Unmarshal(in.Manifest, &m); err != nil {
		return Deployment{}, bosherr.WrapError(err, "Parsing the deployment manifest")
	}
	addons, err := collectAddons(m, in.RuntimeConfigs)
	if err != nil {
		return Deployment{}, err
	}
	groups, err := ownJobs(m)
	if err != nil {
		return Deployment{}, err
	}
	for _, a := range addons {
		if err := a.addTo(groups, m.Name, in.Teams); err != nil {
			return Deployment{}, err
		}
	}
	return Deployment{Name: m.Name, Groups: groups}, nil
}

// Group returns the instance group called name.
func (d Deployment) Group(name string) (Group, bool) {
	i := slices.IndexFunc(d.Groups, func(g Group) bool { return g.Name == name })
	if i < 0 {
		return Group{}, false
	}
	return d.Groups[i], true
}

// Job returns the job called name on the group.
func (g Group) Job(name string) (Job, bool) {
	i := slices.IndexFunc(g.Jobs, func(j Job) bool { return j.Name == name })
	if i < 0 {
		return Job{}, false
	}
	return g.Jobs[i], true
}

// HasJob tells whether a job of that name and release lands on the group.
func (g Group) HasJob(name, release string) bool {
	return slices.ContainsFunc(g.Jobs, func(j Job) bool { return j.Name == name && j.Release == release })
}

func ownJobs(m manifest) ([]Group, error) {
	groups := make([]Group, 0, len(m.InstanceGroups))
	for _, ig := range m.InstanceGroups {
		g, err := newGroup(m, ig)
		if err != nil {
			return nil, err
		}
		groups = append(groups, g)
	}
	return groups, nil
}

func newGroup(m manifest, ig instanceGroup) (Group, error) {
	os, err := stemcellOSOf(m, ig)
	if err != nil {
		return Group{}, err
	}
	g := Group{
		Name:           ig.Name,
		Instances:      ig.Instances,
		Lifecycle:      ig.Lifecycle,
		AZs:            ig.AZs,
		PersistentDisk: ig.PersistentDisk > 0 || ig.PersistentDiskType != "",
		OS:             os,
	}
	if g.Lifecycle == "" {
		g.Lifecycle = "service"
	}
	for _, n := range ig.Networks {
		g.Networks = append(g.Networks, n.Name)
	}
	for _, j := range ig.Jobs {
		props := firstSet(j.Properties, ig.Properties, m.Properties)
		if err := g.add(Job{Name: j.Name, Release: j.Release, Properties: props}); err != nil {
			return Group{}, err
		}
	}
	return g, nil
}

func stemcellOSOf(m manifest, ig instanceGroup) (string, error) {
	i := slices.IndexFunc(m.Stemcells, func(s stemcell) bool { return s.Alias == ig.Stemcell })
	if i < 0 {
		return "", bosherr.Errorf("Instance group '%s': stemcell '%s' is not an alias under stemcells", ig.Name, ig.Stemcell)
	}
	return m.Stemcells[i].OS, nil
}

func (g *Group) add(j Job) error {
	if _, found := g.Job(j.Name); found {
		return bosherr.Errorf("Instance group '%s': job '%s' would land twice (release '%s')", g.Name, j.Name, j.Release)
	}
	if j.Properties == nil {
		j.Properties = map[string]any{}
	}
	g.Jobs = append(g.Jobs, j)
	return nil
}

// firstSet returns the first map that the manifest sets, even to {}: a job's own properties win over the
// deprecated instance group and global ones.
func firstSet(candidates ...map[string]any) map[string]any {
	for _, c := range candidates {
		if c != nil {
			return c
		}
	}
	return nil
}

var variableRef = regexp.MustCompile(`\(\(([^().]+)`)

// Variables names the ((variables)) that the job's properties reference, in order of appearance.
func (j Job) Variables() []string {
	text, _ := yaml.Marshal(j.Properties)
	var names []string
	for _, m := range variableRef.FindAllStringSubmatch(string(text), -1) {
		if !slices.Contains(names, m[1]) {
			names = append(names, m[1])
		}
	}
	return names
}
