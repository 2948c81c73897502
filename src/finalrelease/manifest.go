package finalrelease

import (
	"os"
	"path/filepath"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
	"go.yaml.in/yaml/v3"
)

// Manifest is what a final release manifest (releases/flannel-dns/flannel-dns-N.yml) and a tarball's
// release.MF share.
type Manifest struct {
	Name       string    `yaml:"name"`
	Version    string    `yaml:"version"`
	CommitHash string    `yaml:"commit_hash"`
	Jobs       []Archive `yaml:"jobs"`
	Packages   []Archive `yaml:"packages"`
}

// Archive is a job or a package of a release. SHA1 is bosh's name for the digest; it holds "sha256:<hex>".
type Archive struct {
	Name        string `yaml:"name"`
	Fingerprint string `yaml:"fingerprint"`
	SHA1        string `yaml:"sha1"`
}

// ParseManifest reads a release manifest; source names it in errors.
func ParseManifest(data []byte, source string) (Manifest, error) {
	var m Manifest
	if err := yaml.Unmarshal(data, &m); err != nil {
		return Manifest{}, bosherr.WrapErrorf(err, "Parsing %s", source)
	}
	if m.Name == "" || len(m.Jobs)+len(m.Packages) == 0 {
		return Manifest{}, bosherr.Errorf("%s is not a release manifest: no name, or no jobs and packages", source)
	}
	return m, nil
}

// LoadManifest reads the manifest of final release version from the repository.
func LoadManifest(repo string, version int) (Manifest, error) {
	data, err := os.ReadFile(filepath.Join(repo, ManifestPath(version)))
	if err != nil {
		return Manifest{}, bosherr.WrapErrorf(err, "Reading final release %d", version)
	}
	return ParseManifest(data, ManifestPath(version))
}
