// Package vm runs commands "on" a simulated VM: in its network namespace, with its own /var/vcap,
// /run/flannel, /etc/cni and /etc/resolv.conf bind-mounted from a host directory in a private mount
// namespace (ip netns exec gives each command a fresh one, so nothing is mounted on the host).
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

	"github.com/flannel-dns/flannel-dns/e2e/network"
)

// The paths each VM has to itself (the flanneld job's pre-start writes the CNI config under /etc/cni).
var privatePaths = []string{"/var/vcap", "/run/flannel", "/etc/cni"}

const mountThenExec = `set -e
for target in /var/vcap /run/flannel /etc/cni; do mount --bind "$root$target" "$target"; done
mount --bind "$root/resolv.conf" /etc/resolv.conf
exec "$@"`

// VM is a network namespace plus the directory that holds its private paths.
type VM struct {
	*network.Host
	Root string

	mu    sync.Mutex
	procs map[string]*exec.Cmd
}

// New lays out root for host and points its resolver at nameserver.
func New(host *network.Host, root, nameserver string) (*VM, error) {
	for _, p := range privatePaths {
		if err := os.MkdirAll(filepath.Join(root, p), 0o755); err != nil {
			return nil, bosherr.WrapErrorf(err, "Creating %s for VM %s", p, host.Name)
		}
		// The mount points must exist on the host; an empty directory there changes nothing.
		if err := os.MkdirAll(p, 0o755); err != nil {
			return nil, bosherr.WrapErrorf(err, "Creating mount point %s", p)
		}
	}
	resolv := "nameserver " + nameserver + "\n"
	if err := os.WriteFile(filepath.Join(root, "resolv.conf"), []byte(resolv), 0o644); err != nil {
		return nil, bosherr.WrapErrorf(err, "Writing resolv.conf for VM %s", host.Name)
	}
	return &VM{Host: host, Root: root, procs: map[string]*exec.Cmd{}}, nil
}

// Path is where the VM's path p lives on the host.
func (v *VM) Path(p string) string { return filepath.Join(v.Root, p) }

// Command prepares args to run on the VM.
func (v *VM) Command(args ...string) *exec.Cmd {
	full := append([]string{"netns", "exec", v.Namespace, "sh", "-c", mountThenExec, "sh"}, args...)
	cmd := exec.Command("ip", full...)
	cmd.Env = append(os.Environ(), "root="+v.Root)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
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
// /var/vcap/sys/log/<name>/<name>.log as BOSH jobs do.
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

// StopAll stops every process started on the VM.
func (v *VM) StopAll(grace time.Duration) {
	v.mu.Lock()
	names := make([]string, 0, len(v.procs))
	for name := range v.procs {
		names = append(names, name)
	}
	v.mu.Unlock()
	for _, name := range names {
		v.Stop(name, grace)
	}
}
