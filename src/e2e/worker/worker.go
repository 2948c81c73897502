// Package worker reads what the flanneld job does on a simulated VM: its processes under bpm (bpm's
// container init, the launcher below it, flanneld below that) and the subnet file flanneld writes.
package worker

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"

	"github.com/flannel-dns/flannel-dns/src/e2e/agent"
	"github.com/flannel-dns/flannel-dns/src/e2e/vm"
)

// Process is the monit (and bpm) process name of the flanneld job.
const Process = "flanneld"

// Worker is a VM with its agent.
type Worker struct {
	*vm.VM
	Agent *agent.Agent
	Index int
}

// LauncherPID is the launcher's process ID, 0 when it does not run. monit's pidfile names bpm's container
// process: the launcher itself under bpm 0.12.2 and 1.0.4, the container's init above it under later bpm.
func (w *Worker) LauncherPID() int { return selfOrChild(w.Agent.PID(Process), "flannel-launcher") }

// FlanneldPID is the process ID of flanneld under the launcher, 0 when it does not run.
func (w *Worker) FlanneldPID() int { return selfOrChild(ChildPID(w.LauncherPID()), "flanneld") }

// FlanneldOf is flanneld's process ID from a bpm pidfile's pid: that process, or its child under bpm 1.1 and
// later, whose container init sits above the job's process.
func FlanneldOf(pid int) int { return selfOrChild(pid, "flanneld") }

// selfOrChild is pid when it runs the program called name, else its first child when that one does.
func selfOrChild(pid int, name string) int {
	for _, candidate := range []int{pid, ChildPID(pid)} {
		if candidate != 0 && program(candidate) == name {
			return candidate
		}
	}
	return 0
}

// program is the file name of the program process pid runs, "" when it is gone.
func program(pid int) string {
	exe, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe")
	if err != nil {
		return ""
	}
	return filepath.Base(strings.TrimSuffix(exe, " (deleted)"))
}

// ChildPID is the first child of process parent, 0 if none. The kernel lists children under the thread that
// forked them, so every thread of the parent is read.
func ChildPID(parent int) int {
	if parent == 0 {
		return 0
	}
	lists, _ := filepath.Glob("/proc/" + strconv.Itoa(parent) + "/task/*/children")
	for _, list := range lists {
		data, err := os.ReadFile(list)
		if err != nil {
			continue
		}
		if fields := strings.Fields(string(data)); len(fields) > 0 {
			pid, _ := strconv.Atoi(fields[0])
			return pid
		}
	}
	return 0
}

// SubnetEnv reads flanneld's subnet file (path as on the VM).
func (w *Worker) SubnetEnv(path string) (map[string]string, error) {
	f, err := os.Open(w.Path(path))
	if err != nil {
		return nil, bosherr.WrapErrorf(err, "Reading %s on %s", path, w.Name)
	}
	defer f.Close()
	env := map[string]string{}
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		if k, v, ok := strings.Cut(scanner.Text(), "="); ok {
			env[k] = v
		}
	}
	return env, scanner.Err()
}
