package vm

import (
	"os/exec"
	"path/filepath"
	"strings"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
)

// BuildBoot builds the boot program of the simulated VMs (src/e2e/cmd/vmboot) into dir and returns its path.
// repo is this checkout.
func BuildBoot(repo, dir string) (string, error) {
	out := filepath.Join(dir, "vmboot")
	cmd := exec.Command("go", "build", "-o", out, "./src/e2e/cmd/vmboot")
	cmd.Dir = repo
	if output, err := cmd.CombinedOutput(); err != nil {
		return "", bosherr.WrapErrorf(err, "Building vmboot: %s", strings.TrimSpace(string(output)))
	}
	return out, nil
}

// applySysctls sets, in the VM's network namespace, the stemcell's sysctls that the namespace has its own copy
// of, as the stemcell's boot does from /etc/sysctl.d; the rest are the host's (docs/e2e.md).
func (v *VM) applySysctls() error {
	args := []string{"sysctl", "-q", "-w"}
	for _, s := range v.Stemcell.Sysctls {
		if s.Namespaced {
			args = append(args, s.Arg())
		}
	}
	if len(args) == 3 {
		return nil
	}
	if _, err := v.Run(args...); err != nil {
		return bosherr.WrapErrorf(err, "Applying the sysctls of stemcell %s", v.Stemcell.Name)
	}
	return nil
}
