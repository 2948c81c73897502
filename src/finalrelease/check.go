package finalrelease

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
)

// CheckNamed is check (a): every final release manifest the README names is that of release newest. It
// returns what it found, or why it fails in one line.
func CheckNamed(repo string, newest int) (string, error) {
	readme, err := readReadme(repo)
	if err != nil {
		return "", err
	}
	if err := CheckNamesNewest(readme, newest); err != nil {
		return "", err
	}
	return fmt.Sprintf("%s names %s, the newest final release in %s", ReadmePath, ManifestPath(newest), IndexPath), nil
}

// CheckRebuild is check (b): final release version rebuilds offline from the committed archives alone, each
// job and package archive with the digest its manifest records. bosh's output goes to log.
func CheckRebuild(repo, bosh string, version int, log io.Writer) (string, error) {
	m, err := LoadManifest(repo, version)
	if err != nil {
		return "", err
	}
	work, err := os.MkdirTemp("", "flannel-dns-final-release.")
	if err != nil {
		return "", bosherr.WrapError(err, "Creating a work directory")
	}
	defer os.RemoveAll(work)
	rebuilt, err := Rebuild{Repo: repo, Bosh: bosh, Version: version, WorkDir: work, Log: log}.Run()
	if err != nil {
		return "", bosherr.WrapErrorf(err, "Rebuilding final release %d offline", version)
	}
	t, err := OpenTarball(rebuilt.Tarball)
	if err != nil {
		return "", err
	}
	if err := VerifyArchives(m, ManifestPath(version), t); err != nil {
		return "", bosherr.WrapErrorf(err, "The tarball of final release %d rebuilt from %s/", version, BlobstorePath)
	}
	network := "in a network namespace without network"
	if !rebuilt.Isolated {
		network = "with the network (not root, or no unshare)"
	}
	return fmt.Sprintf("final release %d rebuilds from %s/ alone, %s, with an empty ~/.bosh/cache; its %d job and %d package archives have the sha256 that %s records",
		version, BlobstorePath, network, len(m.Jobs), len(m.Packages), ManifestPath(version)), nil
}

// CheckFingerprints is check (c): final release version has the fingerprints of main's dev release, or the
// README says which commit it was cut from and names what main has changed since.
func CheckFingerprints(repo, devTarball string, version int) (string, error) {
	m, err := LoadManifest(repo, version)
	if err != nil {
		return "", err
	}
	dev, err := OpenTarball(devTarball)
	if err != nil {
		return "", err
	}
	diffs := CompareFingerprints(m, dev.Manifest)
	if len(diffs) == 0 {
		return fmt.Sprintf("final release %d has the fingerprints of main's dev release (%s) for its %d jobs and %d packages",
			version, devTarball, len(m.Jobs), len(m.Packages)), nil
	}
	readme, err := readReadme(repo)
	if err != nil {
		return "", err
	}
	if err := CheckCutFrom(readme, version, m.CommitHash, diffs); err != nil {
		return "", err
	}
	return fmt.Sprintf("final release %d differs from main in %s, as %s says (cut from commit %s)",
		version, join(diffs), ReadmePath, m.CommitHash), nil
}

func readReadme(repo string) (string, error) {
	data, err := os.ReadFile(filepath.Join(repo, ReadmePath))
	if err != nil {
		return "", bosherr.WrapError(err, "Reading the README")
	}
	return string(data), nil
}
