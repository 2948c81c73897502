package finalrelease

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
	"go.yaml.in/yaml/v3"
)

// Paths inside the repository, as bosh lays out a release named flannel-dns.
const (
	IndexPath     = "releases/flannel-dns/index.yml"
	BlobstorePath = "releases/flannel-dns/blobstore"
	ReadmePath    = "README.md"
)

// ManifestPath is the release manifest of final release version, relative to the repository.
func ManifestPath(version int) string {
	return fmt.Sprintf("releases/flannel-dns/flannel-dns-%d.yml", version)
}

type index struct {
	Builds map[string]struct {
		Version string `yaml:"version"`
	} `yaml:"builds"`
}

// NewestVersion returns the highest version among the final releases that the repository's index.yml lists.
func NewestVersion(repo string) (int, error) {
	data, err := os.ReadFile(filepath.Join(repo, IndexPath))
	if err != nil {
		return 0, bosherr.WrapError(err, "Reading the final release index")
	}
	var idx index
	if err := yaml.Unmarshal(data, &idx); err != nil {
		return 0, bosherr.WrapErrorf(err, "Parsing %s", IndexPath)
	}
	newest := 0
	for id, build := range idx.Builds {
		version, err := strconv.Atoi(build.Version)
		if err != nil || version < 1 {
			return 0, bosherr.Errorf("%s: build %s has version '%s', not a whole number", IndexPath, id, build.Version)
		}
		newest = max(newest, version)
	}
	if newest == 0 {
		return 0, bosherr.Errorf("%s lists no final release", IndexPath)
	}
	return newest, nil
}
