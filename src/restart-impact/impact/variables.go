package impact

import (
	"reflect"
	"slices"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
	"go.yaml.in/yaml/v3"

	"github.com/flannel-dns/flannel-dns/src/director/placement"
)

type variables struct {
	Variables []map[string]any `yaml:"variables"`
}

// ChangedVariables names the variables whose definitions differ between two manifests: added, removed or with
// other options. The config server may then issue new values (update_mode converge, for one), which changes
// every template that renders them.
func ChangedVariables(old, new []byte) ([]string, error) {
	var o, n variables
	if err := yaml.Unmarshal(old, &o); err != nil {
		return nil, bosherr.WrapError(err, "Parsing the old manifest's variables")
	}
	if err := yaml.Unmarshal(new, &n); err != nil {
		return nil, bosherr.WrapError(err, "Parsing the new manifest's variables")
	}
	before, after := byName(o.Variables), byName(n.Variables)
	var changed []string
	for _, defs := range []map[string]map[string]any{before, after} {
		for name := range defs {
			if !slices.Contains(changed, name) && !reflect.DeepEqual(before[name], after[name]) {
				changed = append(changed, name)
			}
		}
	}
	slices.Sort(changed)
	return changed, nil
}

func byName(defs []map[string]any) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, d := range defs {
		name, _ := d["name"].(string)
		out[name] = d
	}
	return out
}

// VariableUse maps each instance group of d to the variables among names that its jobs' properties reference.
func VariableUse(d placement.Deployment, names []string) map[string][]string {
	use := map[string][]string{}
	for _, g := range d.Groups {
		for _, j := range g.Jobs {
			for _, v := range j.Variables() {
				if slices.Contains(names, v) && !slices.Contains(use[g.Name], v) {
					use[g.Name] = append(use[g.Name], v)
				}
			}
		}
	}
	return use
}
