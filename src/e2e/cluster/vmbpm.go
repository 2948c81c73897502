package cluster

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
)

// vmBPM makes, under workDir, a copy of the bpm package whose runc adjusts a container's spec to the simulated
// VM (its open-file limit, its cgroup) before running the package's own runc (src/e2e/cmd/vmrunc says why), and
// returns its directory.
func vmBPM(repo, workDir, bpm string) (string, error) {
	dir := filepath.Join(workDir, "bpm-package")
	if out, err := exec.Command("cp", "-a", bpm, dir).CombinedOutput(); err != nil {
		return "", bosherr.WrapErrorf(err, "Copying the bpm package: %s", strings.TrimSpace(string(out)))
	}
	bin := filepath.Join(dir, "bin")
	if err := os.Rename(filepath.Join(bin, "runc"), filepath.Join(bin, "runc.real")); err != nil {
		return "", bosherr.WrapError(err, "Moving bpm's runc aside")
	}
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "runc"), "./src/e2e/cmd/vmrunc")
	build.Dir = repo
	if out, err := build.CombinedOutput(); err != nil {
		return "", bosherr.WrapErrorf(err, "Building vmrunc: %s", strings.TrimSpace(string(out)))
	}
	return dir, nil
}
