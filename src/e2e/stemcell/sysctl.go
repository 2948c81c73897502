package stemcell

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
)

// sysctlFiles are the files the bosh_sysctl stage copies into /etc/sysctl.d: every ubuntu line gets both (xenial
// by its os version, jammy unconditionally).
var sysctlFiles = []string{"60-bosh-sysctl.conf", "60-bosh-sysctl-neigh-fix.conf"}

// Sysctl is one setting of a stemcell's sysctl files. Namespaced says whether a network namespace has its own
// copy, so that a simulated VM can apply it without changing the host.
type Sysctl struct {
	Key, Value string
	Namespaced bool
}

// Arg is the setting as `sysctl -w` takes it.
func (s Sysctl) Arg() string { return s.Key + "=" + s.Value }

// namespaced: every net.* key but the default neighbour table's thresholds, which only the first network
// namespace has.
func namespaced(key string) bool {
	return strings.HasPrefix(key, "net.") && !strings.HasPrefix(key, "net.ipv4.neigh.default.gc_thresh")
}

func readSysctls(cache, name string) ([]Sysctl, error) {
	dir := filepath.Join(cache, "stemcell-"+name, "stemcell_builder", "stages", "bosh_sysctl", "assets")
	var all []Sysctl
	for _, file := range sysctlFiles {
		settings, err := readSysctlFile(filepath.Join(dir, file))
		if err != nil {
			return nil, bosherr.WrapErrorf(err, "Reading the sysctls of stemcell %s (scripts/unpack-stemcells)", name)
		}
		all = append(all, settings...)
	}
	return all, nil
}

// readSysctlFile reads key=value lines as sysctl.d(5) has them, skipping blanks and comments.
func readSysctlFile(path string) ([]Sysctl, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var settings []Sysctl
	lines := bufio.NewScanner(f)
	for lines.Scan() {
		line := strings.TrimSpace(lines.Text())
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		if !ok {
			return nil, bosherr.Errorf("%s: '%s' is not key=value", path, line)
		}
		key = strings.TrimSpace(key)
		settings = append(settings, Sysctl{Key: key, Value: strings.TrimSpace(value), Namespaced: namespaced(key)})
	}
	return settings, lines.Err()
}
