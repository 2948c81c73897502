// Command vmrunc stands where a simulated VM's bpm package has runc. It adjusts the container spec of the
// bundle it is given for what sets a simulated VM apart from a stemcell's, then runs the real runc (runc.real
// beside it) with the same arguments:
//   - the open-file limit: a stemcell lets bpm give a job any limit (cfcr-etcd asks for 100000); this sandbox
//     caps the hard limit at 20000 and grants no CAP_SYS_RESOURCE to raise it, so runc would fail to start such
//     a job. The limit is lowered to the hard limit.
//   - the container's cgroup: bpm 0.12.2 gives runc no cgroup path (runc then takes the container's ID) and 1.0.4
//     a relative one (bpm-<job>); either lands at the top of every cgroup hierarchy. On a VM only that VM uses them; here every simulated VM shares the
//     host's, so two VMs' flanneld would share one cgroup, and stopping one would kill both. A relative path is
//     put under the VM's own cgroup, as bpm 1.4.38 does itself.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

func main() {
	if err := adjustBundle(os.Args[1:]); err != nil {
		fail(err)
	}
	self, err := os.Executable()
	if err != nil {
		fail(err)
	}
	real := filepath.Join(filepath.Dir(self), "runc.real")
	fail(syscall.Exec(real, append([]string{real}, os.Args[1:]...), os.Environ()))
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "vmrunc: %v\n", err)
	os.Exit(1)
}

// adjustBundle rewrites the config.json of the bundle that args name (--bundle or -b), if any. The container's
// ID is the last argument (runc run and create).
func adjustBundle(args []string) error {
	for i, arg := range args {
		if (arg == "--bundle" || arg == "-b") && i+1 < len(args) {
			return adjustSpec(filepath.Join(args[i+1], "config.json"), args[len(args)-1])
		}
	}
	return nil
}

func adjustSpec(path, id string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var spec map[string]any
	if err := json.Unmarshal(data, &spec); err != nil {
		return fmt.Errorf("parsing %s: %w", path, err)
	}
	capped, err := capOpenFiles(spec)
	if err != nil {
		return err
	}
	moved, err := cgroupUnderVM(spec, id)
	if err != nil {
		return err
	}
	if !capped && !moved {
		return nil
	}
	out, err := json.Marshal(spec)
	if err != nil {
		return err
	}
	return os.WriteFile(path, out, 0o600)
}

func capOpenFiles(spec map[string]any) (bool, error) {
	var limit syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &limit); err != nil {
		return false, err
	}
	process, _ := spec["process"].(map[string]any)
	rlimits, _ := process["rlimits"].([]any)
	changed := false
	for _, r := range rlimits {
		rl, _ := r.(map[string]any)
		if rl["type"] != "RLIMIT_NOFILE" {
			continue
		}
		for _, key := range []string{"hard", "soft"} {
			if v, ok := rl[key].(float64); ok && v > float64(limit.Max) {
				rl[key], changed = limit.Max, true
			}
		}
	}
	return changed, nil
}

// cgroupUnderVM puts a relative cgroup path, or none (runc then takes the container's ID: bpm 0.12.2 sets none),
// under the VM's cgroup.
func cgroupUnderVM(spec map[string]any, id string) (bool, error) {
	linux, _ := spec["linux"].(map[string]any)
	if linux == nil {
		return false, nil
	}
	path, _ := linux["cgroupsPath"].(string)
	if strings.HasPrefix(path, "/") {
		return false, nil
	}
	if path == "" {
		path = id
	}
	vm, err := ownCgroup()
	if err != nil {
		return false, err
	}
	linux["cgroupsPath"] = filepath.Join(vm, path)
	return true, nil
}

// ownCgroup is this process's cgroup in the v2 hierarchy, which the simulated VM clones every command into.
func ownCgroup() (string, error) {
	f, err := os.Open("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	defer f.Close()
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		if path, ok := strings.CutPrefix(scanner.Text(), "0::"); ok && path != "/" {
			return path, nil
		}
	}
	return "", fmt.Errorf("no cgroup of a simulated VM in /proc/self/cgroup")
}
