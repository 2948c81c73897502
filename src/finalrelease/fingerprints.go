package finalrelease

import (
	"fmt"
	"maps"
	"slices"
)

// Difference is a job or package whose fingerprint differs between a final release and main's dev release; an
// empty fingerprint means that side does not have it.
type Difference struct {
	Kind  string // "job" or "package"
	Name  string
	Final string
	Main  string
}

func (d Difference) String() string {
	switch {
	case d.Final == "":
		return fmt.Sprintf("%s `%s` (only in main)", d.Kind, d.Name)
	case d.Main == "":
		return fmt.Sprintf("%s `%s` (not in main)", d.Kind, d.Name)
	}
	return fmt.Sprintf("%s `%s` (%.12s in the release, %.12s in main)", d.Kind, d.Name, d.Final, d.Main)
}

// CompareFingerprints lists the jobs, then the packages, whose fingerprints differ between a final release and
// main's dev release, each sorted by name.
func CompareFingerprints(final, main Manifest) []Difference {
	return append(compare("job", final.Jobs, main.Jobs), compare("package", final.Packages, main.Packages)...)
}

func compare(kind string, final, main []Archive) []Difference {
	f, m := fingerprints(final), fingerprints(main)
	both := maps.Clone(f)
	maps.Copy(both, m)
	var diffs []Difference
	for _, name := range slices.Sorted(maps.Keys(both)) {
		if f[name] != m[name] {
			diffs = append(diffs, Difference{Kind: kind, Name: name, Final: f[name], Main: m[name]})
		}
	}
	return diffs
}

func fingerprints(archives []Archive) map[string]string {
	byName := map[string]string{}
	for _, a := range archives {
		byName[a.Name] = a.Fingerprint
	}
	return byName
}
