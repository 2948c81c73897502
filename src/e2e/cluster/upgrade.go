package cluster

// A deployment that starts on an earlier final release of flannel-dns, for the upgrade rehearsal
// (src/e2e/upgrade): the director holds that release and this checkout's dev release; the manifest with the
// ops-files as they are names the final one, and Upgrade deploys it again naming the dev release, as an
// operator's next `bosh deploy` does after uploading a new release.

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"

	"github.com/flannel-dns/flannel-dns/src/e2e/director"
)

// ReleaseName is this release's name in the manifest.
const ReleaseName = "flannel-dns"

// devVersion is the version the simulated director holds this checkout's dev release at.
const devVersion = "0+dev.1"

// dev is this checkout's dev release: its jobs and the compiled packages at Packages.
func (cfg Config) dev() director.Release {
	return director.Release{Jobs: filepath.Join(cfg.Repo, "jobs"), Version: devVersion, Packages: ownPackages(cfg.Packages)}
}

// uploaded are the versions of flannel-dns the simulated director holds, oldest first.
func (cfg Config) uploaded() []director.Release {
	if cfg.Previous != nil {
		return []director.Release{*cfg.Previous, cfg.dev()}
	}
	return []director.Release{cfg.dev()}
}

// devRelease writes the ops-file that names the dev release in the manifest, as an operator deploying a dev
// release does: the release's ops-file pins the final version it was tested with.
func (cfg Config) devRelease() (string, error) {
	ops := fmt.Sprintf("- type: replace\n  path: /releases/name=%s/version\n  value: %q\n", ReleaseName, devVersion)
	path := filepath.Join(cfg.WorkDir, "dev-release.yml")
	return path, os.WriteFile(path, []byte(ops), 0o644)
}

// ownPackages are the compiled packages in dir by name, each resolved to where it lies (the compiled
// package's directory names its fingerprint), nil when dir cannot be read.
func ownPackages(dir string) map[string]string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	pkgs := map[string]string{}
	for _, e := range entries {
		if resolved, err := filepath.EvalSymlinks(filepath.Join(dir, e.Name())); err == nil {
			pkgs[e.Name()] = resolved
		}
	}
	return pkgs
}

// Upgrade deploys the manifest again naming this checkout's dev release instead of the Previous one, as the
// operator's `bosh deploy` after `bosh upload-release` does; the director rolls what changed.
func (c *Cluster) Upgrade() (Changes, error) {
	if c.cfg.Previous == nil || c.upgraded {
		return Changes{}, bosherr.Error("Upgrade needs a cluster deployed from a previous release, not upgraded yet")
	}
	c.upgraded = true
	if err := c.loadDeployments(); err != nil {
		return Changes{}, err
	}
	c.Logf("upgrading flannel-dns %s to %s", c.cfg.Previous.Version, devVersion)
	return c.deploy()
}

// UpgradeFrom makes cfg a cluster that starts on the final release that scripts/build-upgrade-releases left
// under dir/final and upgrades to the dev release compiled under dir/next; for clustertest.New. It names
// E2E_UPGRADE when dir is "".
func UpgradeFrom(dir string) func(*Config) string {
	return func(cfg *Config) string {
		if dir == "" {
			return "E2E_UPGRADE"
		}
		version, _ := os.ReadFile(filepath.Join(dir, "final", "version"))
		cfg.Previous = &director.Release{Jobs: filepath.Join(dir, "final", "jobs"), Version: strings.TrimSpace(string(version)),
			Packages: ownPackages(filepath.Join(dir, "final", "packages"))}
		cfg.Packages = filepath.Join(dir, "next", "packages")
		return ""
	}
}

// LauncherVersion is the version the launcher on the instance called name logged at its last start, "" when
// it logged none.
func (c *Cluster) LauncherVersion(name string) string {
	a := c.agents[name]
	if a == nil {
		return ""
	}
	log, err := os.ReadFile(a.VM.Path(LauncherLog))
	if err != nil {
		return ""
	}
	found := launcherVersion.FindAllSubmatch(log, -1)
	if len(found) == 0 {
		return ""
	}
	return string(found[len(found)-1][1])
}

var launcherVersion = regexp.MustCompile(`starting: version=(\S+)`)
