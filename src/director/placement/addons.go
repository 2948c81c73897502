package placement

import (
	"slices"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
	"go.yaml.in/yaml/v3"
)

type level string

const (
	deploymentLevel level = "deployment"
	runtimeLevel    level = "runtime"
)

type levelledAddon struct {
	addon
	level level
}

// collectAddons returns the manifest's addons, then each runtime config's, in order.
func collectAddons(m manifest, runtimeConfigs [][]byte) ([]levelledAddon, error) {
	var all []levelledAddon
	for _, a := range m.Addons {
		all = append(all, levelledAddon{addon: a, level: deploymentLevel})
	}
	for i, raw := range runtimeConfigs {
		var rc runtimeConfig
		if err := yaml.Unmarshal(raw, &rc); err != nil {
			return nil, bosherr.WrapErrorf(err, "Parsing runtime config %d", i+1)
		}
		for _, a := range rc.Addons {
			all = append(all, levelledAddon{addon: a, level: runtimeLevel})
		}
	}
	for _, a := range all {
		if err := a.validate(); err != nil {
			return nil, err
		}
	}
	return all, nil
}

func (a levelledAddon) validate() error {
	if a.level == deploymentLevel && len(a.Include.Deployments)+len(a.Exclude.Deployments) > 0 {
		return bosherr.Errorf("Addon '%s': a deployment manifest's addon cannot filter on deployments", a.Name)
	}
	for _, f := range []filter{a.Include, a.Exclude} {
		for _, j := range f.Jobs {
			if j.Name == "" || j.Release == "" {
				return bosherr.Errorf("Addon '%s': a job in include/exclude needs both name and release, got name '%s' release '%s'", a.Name, j.Name, j.Release)
			}
		}
		for _, s := range f.Stemcell {
			if s.OS == "" {
				return bosherr.Errorf("Addon '%s': a stemcell in include/exclude needs an os", a.Name)
			}
		}
	}
	return nil
}

func (a levelledAddon) addTo(groups []Group, deployment string, teams []string) error {
	var selected []*Group
	for i := range groups {
		if a.applies(deployment, teams, groups[i]) {
			selected = append(selected, &groups[i])
		}
	}
	for _, j := range a.Jobs {
		props := firstSet(j.Properties, a.Properties)
		for _, g := range selected {
			if err := g.add(Job{Name: j.Name, Release: j.Release, Properties: props, Addon: a.Name}); err != nil {
				return bosherr.WrapErrorf(err, "Addon '%s'", a.Name)
			}
		}
	}
	return nil
}

func (a levelledAddon) applies(deployment string, teams []string, g Group) bool {
	return a.Include.matches(true, a.level, deployment, teams, g) && !a.Exclude.matches(false, a.level, deployment, teams, g)
}

// matches follows the director's Addon::Filter#applies?: every criterion given must hold; an include without
// criteria selects every group, an exclude without criteria selects none.
func (f filter) matches(include bool, lvl level, deployment string, teams []string, g Group) bool {
	filterTeams := f.Teams
	if lvl == deploymentLevel {
		filterTeams = nil
	}
	if f.Lifecycle != "" && f.Lifecycle != g.Lifecycle {
		return false
	}
	if len(f.AZs) > 0 && !overlap(f.AZs, g.AZs) {
		return false
	}
	if len(filterTeams) > 0 && !overlap(filterTeams, teams) {
		return false
	}
	if len(f.Stemcell) > 0 && !slices.ContainsFunc(f.Stemcell, func(s stemcellOS) bool { return s.OS == g.OS }) {
		return false
	}
	if len(f.Networks) > 0 && !overlap(f.Networks, g.Networks) {
		return false
	}
	hasDeployments, hasJobs := len(f.Deployments) > 0, len(f.Jobs) > 0
	if hasDeployments || hasJobs {
		return (!hasDeployments || slices.Contains(f.Deployments, deployment)) &&
			(!hasJobs || slices.ContainsFunc(f.Jobs, func(j jobRef) bool { return g.HasJob(j.Name, j.Release) }))
	}
	if include {
		return true
	}
	return f.Lifecycle != "" || len(f.AZs) > 0 || len(filterTeams) > 0 || len(f.Stemcell) > 0 || len(f.Networks) > 0
}

func overlap(a, b []string) bool {
	return slices.ContainsFunc(a, func(s string) bool { return slices.Contains(b, s) })
}
