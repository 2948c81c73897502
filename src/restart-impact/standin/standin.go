// Package standin fills the ((variables)) that one release's jobs use with stand-in credentials that the bosh
// CLI generates into a vars store, so that templates which check their credentials render without CredHub.
// Manifests filled through one Store share the values, so comparing them shows only what the manifests say.
package standin

import (
	"os"
	"path/filepath"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
	"go.yaml.in/yaml/v3"

	"github.com/flannel-dns/flannel-dns/src/director/interpolate"
	"github.com/flannel-dns/flannel-dns/src/director/placement"
)

// Store is a temporary vars store; Close removes it.
type Store struct {
	bosh string
	dir  string
}

// NewStore makes an empty vars store in a private temporary directory.
func NewStore(bosh string) (*Store, error) {
	dir, err := os.MkdirTemp("", "standin-")
	if err != nil {
		return nil, bosherr.WrapError(err, "Creating a directory for stand-in credentials")
	}
	return &Store{bosh: bosh, dir: dir}, nil
}

// Close removes the store and every file Fill wrote.
func (s *Store) Close() error {
	return os.RemoveAll(s.dir)
}

// Fill returns the manifests with the variables that release's jobs reference in any of them (and the CAs that
// sign those) filled in, the same set in each, so that filling makes no difference between them. Other
// ((variables)) stay, and the other variable definitions are left out of the interpolation, because the bosh CLI
// cannot generate every option CredHub takes.
func (s *Store) Fill(release string, manifests ...[]byte) ([][]byte, error) {
	var names []string
	parsed := make([]map[string]any, len(manifests))
	for i, manifest := range manifests {
		d, err := placement.Place(placement.Input{Manifest: manifest})
		if err != nil {
			return nil, err
		}
		names = append(names, referenced(d, release)...)
		if err := yaml.Unmarshal(manifest, &parsed[i]); err != nil {
			return nil, bosherr.WrapError(err, "Parsing the manifest")
		}
	}
	filled := make([][]byte, len(manifests))
	for i, m := range parsed {
		m["variables"] = needed(m["variables"], names)
		var err error
		if filled[i], err = s.interpolate(m); err != nil {
			return nil, err
		}
	}
	return filled, nil
}

func (s *Store) interpolate(m map[string]any) ([]byte, error) {
	reduced, err := yaml.Marshal(m)
	if err != nil {
		return nil, bosherr.WrapError(err, "Writing the reduced manifest")
	}
	f, err := os.CreateTemp(s.dir, "manifest-*.yml")
	if err != nil {
		return nil, bosherr.WrapError(err, "Creating the reduced manifest")
	}
	defer f.Close()
	if _, err := f.Write(reduced); err != nil {
		return nil, bosherr.WrapError(err, "Writing the reduced manifest")
	}
	return interpolate.WithVarsStore(s.bosh, f.Name(), filepath.Join(s.dir, "vars.yml"))
}

// referenced are the variable names in the properties of release's jobs, on any instance group.
func referenced(d placement.Deployment, release string) []string {
	var names []string
	for _, g := range d.Groups {
		for _, j := range g.Jobs {
			if j.Release == release {
				names = append(names, j.Variables()...)
			}
		}
	}
	return names
}

// needed keeps, in their order, the definitions of names and, transitively, of the CAs they name.
func needed(variables any, names []string) []any {
	defs, _ := variables.([]any)
	byName := map[string]map[string]any{}
	for _, v := range defs {
		if def, ok := v.(map[string]any); ok {
			name, _ := def["name"].(string)
			byName[name] = def
		}
	}
	want := map[string]bool{}
	for len(names) > 0 {
		name := names[0]
		names = names[1:]
		def, found := byName[name]
		if !found || want[name] {
			continue
		}
		want[name] = true
		if options, ok := def["options"].(map[string]any); ok {
			if ca, ok := options["ca"].(string); ok {
				names = append(names, ca)
			}
		}
	}
	var keep []any
	for _, v := range defs {
		def, _ := v.(map[string]any)
		if name, _ := def["name"].(string); want[name] {
			keep = append(keep, def)
		}
	}
	return keep
}
