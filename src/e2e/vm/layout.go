package vm

import (
	"bufio"
	"os"
	"os/user"
	"strconv"
	"strings"
	"syscall"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"

	"github.com/flannel-dns/flannel-dns/src/e2e/network"
)

// runDir is the agent's tmpfs: /var/vcap/sys is /var/vcap/data/sys.
const runDir = "/var/vcap/data/sys/run"

// agentDir is a directory bosh-agent makes at boot (platform.SetupDataDir, SetupBlobsDir), with its mode and
// whether it is chowned root:vcap.
type agentDir struct {
	path string
	mode os.FileMode
	vcap bool
}

// agentDirs are the lane's agent's directories under /var/vcap/data, in the order it makes them. data itself is
// the root of the ephemeral disk's fresh ext4 (0755 root:root) on an IaaS with one.
func (v *VM) agentDirs() []agentDir {
	dirs := []agentDir{
		{"/var/vcap/data", 0o755, false},
		{"/var/vcap/data/sys", 0o750, true},
		{"/var/vcap/data/sys/log", 0o750, true},
		{"/var/vcap/data/jobs", 0o750, true},
	}
	if v.Stemcell.DynamicDisks {
		dirs = append(dirs, agentDir{"/var/vcap/data/dynamic_disks", 0o700, true})
	}
	if v.Stemcell.SensitiveBlobs {
		dirs = append(dirs, agentDir{"/var/vcap/data/sensitive_blobs", 0o700, true})
	}
	return append(dirs,
		agentDir{"/var/vcap/data/packages", 0o755, true},
		agentDir{"/var/vcap/data/blobs", 0o700, true},
	)
}

// stemcellDirs exist on every stemcell before any job lands (the agent makes /var/vcap/jobs, /var/vcap/packages
// and /var/vcap/instance when it first applies or writes them; the stemcell has /var/vcap/monit).
var stemcellDirs = []string{"/var/vcap/jobs", "/var/vcap/packages", "/var/vcap/instance", "/var/vcap/monit/job", "/var/vcap/bosh"}

// setUpAgentDirs lays /var/vcap out as the lane's agent does at boot: its directories, the tmpfs at
// /var/vcap/data/sys/run mounted with size= only (so mode 1777) and chowned root:vcap, and /var/vcap/sys
// linking to data/sys. The link is relative (the agent's is absolute) so that it resolves from the host too,
// as the agent's job links here do. The tmpfs is mounted in the host's mount namespace, under the VM's disk,
// so that the harness reads the pidfiles in it; the VM's mount namespace takes it along (mount --rbind). Its
// source is the VM's namespace name, by which a later run finds it when this one was killed.
func (v *VM) setUpAgentDirs() error {
	gid, err := vcapGID()
	if err != nil {
		return err
	}
	for _, d := range v.agentDirs() {
		if err := v.makeDir(d, gid); err != nil {
			return err
		}
	}
	for _, d := range stemcellDirs {
		if err := os.MkdirAll(v.Path(d), 0o755); err != nil {
			return bosherr.WrapErrorf(err, "Creating %s on VM %s", d, v.Name)
		}
	}
	run := v.Path(runDir)
	if err := os.MkdirAll(run, 0o750); err != nil {
		return bosherr.WrapErrorf(err, "Creating %s on VM %s", runDir, v.Name)
	}
	if err := syscall.Mount(v.Namespace, run, "tmpfs", 0, "size="+v.Stemcell.RunTmpfsSize); err != nil {
		return bosherr.WrapErrorf(err, "Mounting the agent's tmpfs at %s on VM %s", runDir, v.Name)
	}
	if err := os.Chown(run, 0, gid); err != nil {
		return bosherr.WrapErrorf(err, "Giving %s on VM %s to group vcap", runDir, v.Name)
	}
	if err := os.Symlink("data/sys", v.Path("/var/vcap/sys")); err != nil {
		return bosherr.WrapErrorf(err, "Linking /var/vcap/sys on VM %s", v.Name)
	}
	return nil
}

func (v *VM) makeDir(d agentDir, gid int) error {
	p := v.Path(d.path)
	if err := os.MkdirAll(p, d.mode); err != nil {
		return bosherr.WrapErrorf(err, "Creating %s on VM %s", d.path, v.Name)
	}
	if err := os.Chmod(p, d.mode); err != nil { // MkdirAll leaves an existing directory's mode and the umask's
		return bosherr.WrapErrorf(err, "Setting the mode of %s on VM %s", d.path, v.Name)
	}
	if d.vcap {
		if err := os.Chown(p, 0, gid); err != nil {
			return bosherr.WrapErrorf(err, "Giving %s on VM %s to group vcap", d.path, v.Name)
		}
	}
	return nil
}

// unmountRunDir takes the agent's tmpfs away from the host (the VM's mount namespace goes with the VM).
func (v *VM) unmountRunDir() error {
	err := syscall.Unmount(v.Path(runDir), syscall.MNT_DETACH)
	if err != nil && err != syscall.EINVAL && err != syscall.ENOENT {
		return bosherr.WrapErrorf(err, "Unmounting %s of VM %s", runDir, v.Name)
	}
	return nil
}

// sweepRunDirs unmounts the agent's tmpfs of VMs of earlier runs whose process is gone.
func sweepRunDirs() error {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return bosherr.WrapError(err, "Reading the host's mounts")
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// mount ID, parent, major:minor, root, mount point, options, optional fields..., -, type, source, ...
		fields := strings.Fields(sc.Text())
		for i := 6; i+2 < len(fields); i++ {
			if fields[i] != "-" {
				continue
			}
			if fields[i+1] == "tmpfs" && network.IsLeftover(fields[i+2]) {
				if err := syscall.Unmount(unescapeMountPoint(fields[4]), syscall.MNT_DETACH); err != nil {
					return bosherr.WrapErrorf(err, "Unmounting leftover tmpfs %s", fields[4])
				}
			}
			break
		}
	}
	return sc.Err()
}

// unescapeMountPoint undoes mountinfo's octal escapes (\040 for a space).
func unescapeMountPoint(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// vcapGID is the host's group vcap, which the VMs share (scripts/setup makes it).
func vcapGID() (int, error) {
	g, err := user.LookupGroup("vcap")
	if err != nil {
		return 0, bosherr.WrapError(err, "Looking up group vcap")
	}
	return strconv.Atoi(g.Gid)
}

// remountRunDir gives the emptied tmpfs the mode and owner a boot's new one has: 1777, root:vcap.
func (v *VM) remountRunDir() error {
	gid, err := vcapGID()
	if err != nil {
		return err
	}
	run := v.Path(runDir)
	if err := os.Chmod(run, os.ModeSticky|0o777); err != nil {
		return bosherr.WrapErrorf(err, "Setting the mode of %s on VM %s", runDir, v.Name)
	}
	if err := os.Chown(run, 0, gid); err != nil {
		return bosherr.WrapErrorf(err, "Giving %s on VM %s to group vcap", runDir, v.Name)
	}
	return nil
}
