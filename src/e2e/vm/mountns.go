package vm

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
)

// mountNSDir holds the files that keep the VMs' mount namespaces alive. It is a private mount of its own: the
// kernel refuses to bind a mount namespace onto a path that would propagate into that same namespace.
const mountNSDir = "/run/fde-mnt"

func mountNSFile(name string) string { return filepath.Join(mountNSDir, name) }

func createMountNS(file string) error {
	if err := privateMountNSDir(); err != nil {
		return err
	}
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		return bosherr.WrapErrorf(err, "Creating %s", file)
	}
	out, err := exec.Command("unshare", "--mount="+file, "--propagation", "private", "true").CombinedOutput()
	if err != nil {
		_ = os.Remove(file)
		if err != nil {
			return bosherr.WrapErrorf(err, "Creating mount namespace %s: %s", file, strings.TrimSpace(string(out)))
		}
		return nil
	}
	return nil
}

func privateMountNSDir() error {
	if err := os.MkdirAll(mountNSDir, 0o700); err != nil {
		return bosherr.WrapErrorf(err, "Creating %s", mountNSDir)
	}
	err := syscall.Mount("", mountNSDir, "", syscall.MS_PRIVATE, "")
	if errors.Is(err, syscall.EINVAL) { // not a mount point yet
		if err = syscall.Mount(mountNSDir, mountNSDir, "", syscall.MS_BIND, ""); err == nil {
			err = syscall.Mount("", mountNSDir, "", syscall.MS_PRIVATE, "")
		}
	}
	if err != nil {
		return bosherr.WrapErrorf(err, "Making %s a private mount", mountNSDir)
	}
	return nil
}

// removeMountNS lets the namespace go (its mounts vanish with its last user) and removes its file.
func removeMountNS(file string) error {
	if err := syscall.Unmount(file, syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOENT) {
		return bosherr.WrapErrorf(err, "Unmounting %s", file)
	}
	if err := os.Remove(file); err != nil && !os.IsNotExist(err) {
		return bosherr.WrapErrorf(err, "Removing %s", file)
	}
	// The last VM takes the private mount with it; while another VM's namespace is held there, it is busy.
	if syscall.Unmount(mountNSDir, 0) == nil {
		_ = os.Remove(mountNSDir)
	}
	return nil
}
