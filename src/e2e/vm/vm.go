// Package vm is a simulated BOSH VM: the network namespace that network.AddHost made, plus a mount namespace
// and a cgroup of its own that last as long as the VM does. In its mount namespace the VM has its own /etc (an
// overlay on the host's, so what it writes there stays its own), /run and /var/vcap (directories under Root).
// Every command runs in both namespaces and in the VM's cgroup: bpm names runc's cgroups after its own, so
// two VMs' containers never share one.
package vm

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"

	"github.com/flannel-dns/flannel-dns/src/e2e/network"
	"github.com/flannel-dns/flannel-dns/src/e2e/stemcell"
)

// privateDirs are the VM's own; the host keeps empty mount points for them. /var/lib/cni is where the CNI
// plugins and the container runtime keep their state (addresses handed out, results), on the VM's disk; /root
// is root's home, where monit keeps its state and id files, which a reboot keeps.
var privateDirs = []string{"/run", "/var/vcap", "/var/lib/cni", "/root"}

// volatileDirs are tmpfs on a stemcell (/var/vcap/sys/run is the agent's tmpfs, layout.go): a reboot empties
// them.
var volatileDirs = []string{"/run", runDir}

// Resolver is what a VM's resolv.conf names: bosh-dns's address on every BOSH VM.
const Resolver = "169.254.0.2"

// VM is a network namespace plus the mount namespace and cgroup that make it a machine of its own.
type VM struct {
	*network.Host
	Root     string
	Stemcell stemcell.Stemcell

	boot string // src/e2e/cmd/vmboot, under which every process of the VM starts (BuildBoot)

	mountNS string
	cgroup  *cgroup

	mu    sync.Mutex
	procs map[string]*exec.Cmd
}

// ulimitShim is read by every bash script on the VM (BASH_ENV). A stemcell lets jobs raise their open-file
// limit (bosh-dns's start script asks for 65536, under `bash -e`); this sandbox caps the hard limit and
// grants no CAP_SYS_RESOURCE to raise it, so `ulimit -n N` beyond it is capped at it instead of failing.
const ulimitShim = `ulimit() {
  if [ "$#" -eq 2 ] && [ "$1" = -n ] && [ "$2" -gt "$(builtin ulimit -Hn)" ] 2>/dev/null; then
    builtin ulimit -n "$(builtin ulimit -Hn)"
  else
    builtin ulimit "$@"
  fi
}
`

// dpkgStandIn is the VM's dpkg: the VMs share the host's /usr, and docker's job runs dpkg -i on a package of its
// own (aufs-tools) on every start, which must not land on the host.
const dpkgStandIn = `#!/bin/sh
echo "dpkg on a simulated VM installs nothing: dpkg $*" >&2
`

// cgroupView gives the VM a /sys/fs/cgroup of its own, a tmpfs holding the host's hierarchies (bound, so that
// bpm's and the VM's cgroups are where the harness looks): docker's start (cgroupfs-mount) makes a directory there
// for every controller that has none and mounts it, which on the host's tmpfs left empty directories that runc
// then took for hierarchies. A controller without a hierarchy gets an empty tmpfs at its path instead, so that
// cgroupfs-mount finds a mount point there and leaves it alone: a v1 hierarchy, once mounted, lives on in the
// kernel (sockets pin net_cls and net_prio) and runc then puts every container in it, on every VM and on the
// host, where no mount shows it. The stand-in stays writable: bpm 0.12.2 chmods every enabled controller's mount
// point before it mounts the controller there, as on a stemcell, and refused to start any job on a read-only one
// while the machine had no net_cls hierarchy yet (a fresh machine). (A controller that has a hierarchy no mount
// shows is left as it is: runc would try to make its cgroups on the stand-in.)
const cgroupView = `held="$root/.cgroup"
mkdir -p "$held"
mount --rbind /sys/fs/cgroup "$held"
mount -t tmpfs -o mode=0755 cgroup /sys/fs/cgroup
for entry in "$held"/*; do
  name=${entry##*/}
  if [ -L "$entry" ]; then
    cp -P "$entry" "/sys/fs/cgroup/$name"
  else
    mkdir "/sys/fs/cgroup/$name"
    mount --rbind "$entry" "/sys/fs/cgroup/$name"
  fi
done
umount -l "$held"
for name in $(awk '!/^#/ && $2 == 0 && $4 == 1 { print $1 }' /proc/cgroups); do
  [ -e "/sys/fs/cgroup/$name" ] && continue
  mkdir "/sys/fs/cgroup/$name"
  mount -t tmpfs -o size=4k,mode=0555 unmounted-controller "/sys/fs/cgroup/$name"
done`

// dpkg is the stand-in's file, beside the VM's disk.
func (v *VM) dpkg() string { return filepath.Join(v.Root, "dpkg") }

// New lays out root as the disk of a VM of stemcell line sc, /var/vcap as its agent makes it, creates its
// mount namespace and cgroup, and applies the stemcell's sysctls. Every process of the VM starts under boot
// (BuildBoot).
func New(host *network.Host, root string, sc stemcell.Stemcell, boot string) (*VM, error) {
	v := &VM{Host: host, Root: root, Stemcell: sc, boot: boot, mountNS: mountNSFile(host.Namespace), procs: map[string]*exec.Cmd{}}
	if err := v.layOut(); err != nil {
		return nil, err
	}
	if err := v.setUpAgentDirs(); err != nil {
		_ = v.unmountRunDir()
		return nil, err
	}
	var err error
	if v.cgroup, err = newCgroup(host.Namespace); err != nil {
		_ = v.unmountRunDir()
		return nil, err
	}
	if err := v.mount(); err != nil {
		_ = v.Destroy()
		return nil, err
	}
	if err := v.applySysctls(); err != nil {
		_ = v.Destroy()
		return nil, err
	}
	return v, nil
}

func (v *VM) layOut() error {
	dirs := []string{v.Path("/etc"), filepath.Join(v.Root, ".etc-work")}
	for _, d := range privateDirs {
		dirs = append(dirs, v.Path(d))
	}
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return bosherr.WrapErrorf(err, "Creating %s for VM %s", d, v.Name)
		}
	}
	for _, p := range privateDirs {
		// The mount points must exist on the host; an empty directory there changes nothing.
		if err := os.MkdirAll(p, 0o755); err != nil {
			return bosherr.WrapErrorf(err, "Creating mount point %s", p)
		}
	}
	if err := os.Chmod(v.Path("/root"), 0o700); err != nil {
		return bosherr.WrapErrorf(err, "Closing root's home on VM %s", v.Name)
	}
	if err := os.WriteFile(v.BashEnv(), []byte(ulimitShim), 0o644); err != nil {
		return bosherr.WrapErrorf(err, "Writing the ulimit shim of VM %s", v.Name)
	}
	if err := os.WriteFile(v.dpkg(), []byte(dpkgStandIn), 0o755); err != nil {
		return bosherr.WrapErrorf(err, "Writing the dpkg stand-in of VM %s", v.Name)
	}
	resolv := "nameserver " + Resolver + "\n"
	if err := os.WriteFile(v.Path("/etc/resolv.conf"), []byte(resolv), 0o644); err != nil {
		return bosherr.WrapErrorf(err, "Writing resolv.conf for VM %s", v.Name)
	}
	return nil
}

// mount creates the VM's mount namespace, held by a file as `ip netns` holds network namespaces, and mounts
// the VM's own directories in it, with what is mounted under them (the agent's tmpfs).
func (v *VM) mount() error {
	if err := createMountNS(v.mountNS); err != nil {
		return err
	}
	script := `set -e
mount -t overlay overlay -o "lowerdir=/etc,upperdir=$root/etc,workdir=$root/.etc-work" /etc
for dir in ` + strings.Join(privateDirs, " ") + `; do mount --rbind "$root$dir" "$dir"; done
mount --bind "$dpkg" /usr/bin/dpkg
` + cgroupView
	cmd := exec.Command("nsenter", "--mount="+v.mountNS, "--", "sh", "-c", script)
	cmd.Env = append(os.Environ(), "root="+v.Root, "dpkg="+v.dpkg())
	if out, err := cmd.CombinedOutput(); err != nil {
		return bosherr.WrapErrorf(err, "Mounting the directories of VM %s: %s", v.Name, strings.TrimSpace(string(out)))
	}
	return nil
}

// bashEnv is the ulimit shim's file: beside the VM's disk, at the same path inside the VM as on the host.
func (v *VM) BashEnv() string { return filepath.Join(v.Root, "bash_env") }

// Path is where the VM's path p lives on the host (for /etc: only what the VM wrote itself).
func (v *VM) Path(p string) string { return filepath.Join(v.Root, p) }

// Command prepares args to run on the VM: under its boot program, in its namespaces and its cgroup, in a process
// group of its own.
func (v *VM) Command(args ...string) *exec.Cmd {
	full := append([]string{"-kernel", v.Stemcell.Kernel.String(),
		"nsenter", "--mount=" + v.mountNS, "--net=/run/netns/" + v.Namespace, "--"}, args...)
	cmd := exec.Command(v.boot, full...)
	cmd.Env = append(os.Environ(), "BASH_ENV="+v.BashEnv())
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, UseCgroupFD: true, CgroupFD: v.cgroup.fd()}
	return cmd
}

// Run runs args on the VM and returns its standard output.
func (v *VM) Run(args ...string) (string, error) {
	cmd := v.Command(args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), bosherr.WrapErrorf(err, "On %s: %s: %s", v.Name, strings.Join(args, " "), strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}

// Start runs args on the VM in the background as process name, logging to the VM's
// /var/vcap/sys/log/<name>/<name>.log as BOSH jobs do. It is for what the harness runs outside BOSH's jobs.
func (v *VM) Start(name string, env []string, args ...string) error {
	logDir := v.Path("/var/vcap/sys/log/" + name)
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return bosherr.WrapErrorf(err, "Creating log directory for %s", name)
	}
	log, err := os.OpenFile(filepath.Join(logDir, name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return bosherr.WrapErrorf(err, "Opening log of %s", name)
	}
	defer log.Close()
	cmd := v.Command(args...)
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return bosherr.WrapErrorf(err, "Starting %s on %s", name, v.Name)
	}
	go func() { _ = cmd.Wait() }()
	v.mu.Lock()
	v.procs[name] = cmd
	v.mu.Unlock()
	return nil
}

// PID is the process ID of the process started as name (0 if none).
func (v *VM) PID(name string) int {
	v.mu.Lock()
	defer v.mu.Unlock()
	if cmd, ok := v.procs[name]; ok {
		return cmd.Process.Pid
	}
	return 0
}

// Stop sends SIGTERM to the process group of name, then SIGKILL after grace.
func (v *VM) Stop(name string, grace time.Duration) {
	v.mu.Lock()
	cmd, ok := v.procs[name]
	delete(v.procs, name)
	v.mu.Unlock()
	if !ok {
		return
	}
	pgid := cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) && syscall.Kill(-pgid, 0) == nil {
		time.Sleep(50 * time.Millisecond)
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
}

// KillAll kills every process of the VM with SIGKILL, as a power cut does, and forgets what Start started.
func (v *VM) KillAll() error {
	v.mu.Lock()
	v.procs = map[string]*exec.Cmd{}
	v.mu.Unlock()
	deadline := time.Now().Add(10 * time.Second)
	for {
		pids := append(network.PIDsIn(v.Namespace), v.cgroup.pids()...)
		if len(pids) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return bosherr.Errorf("Processes %v on %s did not die", pids, v.Name)
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// ForgetVolatile empties what a stemcell keeps in memory (/run, /var/vcap/sys/run) and the cgroups of the
// VM's dead containers: what a boot starts without. Call it with no process running (KillAll).
func (v *VM) ForgetVolatile() error {
	for _, dir := range volatileDirs {
		if err := emptyDir(v.Path(dir)); err != nil {
			return err
		}
	}
	gid, err := vcapGID()
	if err != nil {
		return err
	}
	if err := v.ownRunDir(gid); err != nil { // a reboot's tmpfs is a new one
		return err
	}
	if err := v.removeOwnCgroups("-mindepth 1"); err != nil {
		return err
	}
	return v.cgroup.removeChildren()
}

// ownCgroups removes, in every cgroup hierarchy mounted in the VM, the directories under the VM's cgroup name
// ($find_args choose whether that directory itself goes). bpm and docker mount v1 controllers in the VM
// that the host has not mounted: what runc made there the host cannot see, and left behind it would keep
// those hierarchies alive in the kernel after the VM is gone.
const ownCgroups = `awk '{ for (i = 7; i <= NF; i++) if ($i == "-") { if ($(i+1) ~ /^cgroup2?$/) print $5; break } }' /proc/self/mountinfo |
while read -r mnt; do
  [ -d "$mnt/$name" ] || continue
  find "$mnt/$name" $find_args -depth -type d -exec rmdir {} + || status=1
done
exit ${status:-0}`

func (v *VM) removeOwnCgroups(findArgs string) error {
	cmd := exec.Command("nsenter", "--mount="+v.mountNS, "--", "sh", "-c", ownCgroups)
	cmd.Env = append(os.Environ(), "name="+v.cgroup.name, "find_args="+findArgs)
	if out, err := cmd.CombinedOutput(); err != nil {
		return bosherr.WrapErrorf(err, "Removing the cgroups of VM %s: %s", v.Name, strings.TrimSpace(string(out)))
	}
	return nil
}

// Destroy kills every process and removes the VM's mount namespace and cgroup; its disk (Root) stays.
func (v *VM) Destroy() error {
	var problems []string
	if err := v.KillAll(); err != nil {
		problems = append(problems, err.Error())
	}
	if v.cgroup != nil {
		if err := v.removeOwnCgroups(""); err != nil {
			problems = append(problems, err.Error())
		}
	}
	if err := removeMountNS(v.mountNS); err != nil {
		problems = append(problems, err.Error())
	}
	if err := v.unmountRunDir(); err != nil {
		problems = append(problems, err.Error())
	}
	if v.cgroup != nil {
		if err := v.cgroup.remove(); err != nil {
			problems = append(problems, err.Error())
		}
	}
	if len(problems) > 0 {
		return bosherr.Errorf("Destroying VM %s: %s", v.Name, strings.Join(problems, "; "))
	}
	return nil
}

func emptyDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return bosherr.WrapErrorf(err, "Reading %s", dir)
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return bosherr.WrapErrorf(err, "Emptying %s", dir)
		}
	}
	return nil
}

// SweepLeftovers removes the mount namespaces and cgroups of VMs of earlier runs whose process is gone
// (network.SweepLeftovers removes their network namespaces).
func SweepLeftovers() error {
	if err := sweepRunDirs(); err != nil {
		return err
	}
	entries, _ := os.ReadDir(mountNSDir)
	for _, e := range entries {
		if network.IsLeftover(e.Name()) {
			if err := removeMountNS(mountNSFile(e.Name())); err != nil {
				return err
			}
		}
	}
	mounts, err := cgroupMounts()
	if err != nil {
		return err
	}
	for _, m := range mounts {
		dirs, _ := os.ReadDir(m.dir)
		for _, d := range dirs {
			if !d.IsDir() || !network.IsLeftover(d.Name()) {
				continue
			}
			c := &cgroup{name: d.Name()}
			for _, pid := range c.pids() {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			if err := c.removeChildren(); err != nil {
				return err
			}
			if err := os.Remove(filepath.Join(m.dir, d.Name())); err != nil && !os.IsNotExist(err) {
				return bosherr.WrapErrorf(err, "Removing leftover cgroup %s", d.Name())
			}
		}
	}
	return nil
}
