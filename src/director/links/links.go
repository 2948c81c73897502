// Package links resolves links as the director does for a deployment without explicit link configuration:
// each link a job consumes goes to the one job in the deployment that provides a link of its type, and the
// consumer's templates get the provider's instances and the properties the provider's spec lists for it.
package links

import (
	"fmt"
	"strings"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"

	"github.com/flannel-dns/flannel-dns/src/director/placement"
	"github.com/flannel-dns/flannel-dns/src/jobrender"
)

// Jobs finds the spec of a release's job; found is false when that release is not here.
type Jobs func(release, job string) (spec jobrender.Job, found bool, err error)

// Provider is one job's provided link.
type Provider struct {
	Group string
	Job   string
	Link  jobrender.Link
	// Properties are the provider's values for the link's properties, the spec's defaults filled in.
	Properties map[string]any
}

// Instance is one instance of the provider's group as a link lists it.
type Instance struct {
	Name      string `json:"name"`
	Index     int    `json:"index"`
	ID        string `json:"id"`
	AZ        string `json:"az"`
	Address   string `json:"address"`
	Bootstrap bool   `json:"bootstrap"`
}

// Resolved maps a consumer (group, job, link name) to its provider.
type Resolved map[consumer]*Provider

type consumer struct{ group, job, link string }

// Of is the link called name that the job on group consumes; nil when it consumes none of that name.
func (r Resolved) Of(group, job, name string) *Provider { return r[consumer{group, job, name}] }

// For lists the links the job on group consumes, by link name.
func (r Resolved) For(group, job string) map[string]*Provider {
	links := map[string]*Provider{}
	for c, p := range r {
		if c.group == group && c.job == job {
			links[c.link] = p
		}
	}
	return links
}

// Resolve links every consumer in d whose release is here to its provider. A required link without exactly
// one provider of its type fails, as the director fails the deploy.
func Resolve(d placement.Deployment, jobs Jobs) (Resolved, error) {
	providers, err := providersOf(d, jobs)
	if err != nil {
		return nil, err
	}
	resolved := Resolved{}
	for _, g := range d.Groups {
		for _, j := range g.Jobs {
			spec, found, err := jobs(j.Release, j.Name)
			if err != nil || !found {
				if err != nil {
					return nil, err
				}
				continue
			}
			for _, c := range spec.Consumes {
				p, err := pick(providers[c.Type], c, g.Name, j.Name)
				if err != nil {
					return nil, err
				}
				if p != nil {
					resolved[consumer{g.Name, j.Name, c.Name}] = p
				}
			}
		}
	}
	return resolved, nil
}

func providersOf(d placement.Deployment, jobs Jobs) (map[string][]*Provider, error) {
	byType := map[string][]*Provider{}
	for _, g := range d.Groups {
		for _, j := range g.Jobs {
			spec, found, err := jobs(j.Release, j.Name)
			if err != nil {
				return nil, err
			}
			if !found {
				continue
			}
			for _, l := range spec.Provides {
				byType[l.Type] = append(byType[l.Type], &Provider{Group: g.Name, Job: j.Name, Link: l,
					Properties: linkProperties(l, spec, j.Properties)})
			}
		}
	}
	return byType, nil
}

func pick(candidates []*Provider, c jobrender.Link, group, job string) (*Provider, error) {
	switch {
	case len(candidates) == 1:
		return candidates[0], nil
	case len(candidates) == 0 && c.Optional:
		return nil, nil
	case len(candidates) == 0:
		return nil, bosherr.Errorf("Job '%s' on '%s' consumes link '%s' of type '%s', which no job provides", job, group, c.Name, c.Type)
	}
	var names []string
	for _, p := range candidates {
		names = append(names, fmt.Sprintf("%s/%s", p.Group, p.Job))
	}
	return nil, bosherr.Errorf("Job '%s' on '%s' consumes link '%s' of type '%s', which several jobs provide: %s",
		job, group, c.Name, c.Type, strings.Join(names, ", "))
}

// linkProperties takes each property the link lists from the provider's manifest properties, or the spec's
// default when the manifest does not set it.
func linkProperties(l jobrender.Link, spec jobrender.Job, manifest map[string]any) map[string]any {
	props := map[string]any{}
	for _, name := range l.Properties {
		value, ok := lookup(manifest, name)
		if !ok {
			value = spec.Properties[name].Default
		}
		set(props, name, value)
	}
	return props
}

func lookup(m map[string]any, dotted string) (any, bool) {
	var cur any = m
	for _, key := range strings.Split(dotted, ".") {
		next, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = next[key]; !ok || cur == nil {
			return nil, false
		}
	}
	return cur, true
}

func set(m map[string]any, dotted string, value any) {
	keys := strings.Split(dotted, ".")
	for _, key := range keys[:len(keys)-1] {
		next, ok := m[key].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[key] = next
		}
		m = next
	}
	m[keys[len(keys)-1]] = value
}

// Spec is what the director hands a consumer's templates for p (an entry of spec.links): the provider's
// instances, the link's properties, and what link('x').address encodes.
func (p *Provider) Spec(deployment, network string, instances []Instance) map[string]any {
	list := make([]any, 0, len(instances))
	for _, inst := range instances {
		list = append(list, inst)
	}
	return map[string]any{"instances": list, "properties": p.Properties, "instance_group": p.Group,
		"default_network": network, "deployment_name": deployment, "domain": "bosh",
		"use_short_dns_addresses": false, "use_link_dns_names": false}
}
