package network

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
)

// namespaceRoot starts every namespace name this harness creates; the owner's PID follows it, so a later
// run can tell a leftover of a dead run from a namespace that a live run still uses.
const namespaceRoot = "fde"

// Prefix names the namespaces of this process.
func Prefix() string { return namespaceRoot + strconv.Itoa(os.Getpid()) }

// RemoveNamespace kills the processes whose network namespace is ns (they can only be ours: the
// namespace is), then deletes it. A namespace that is already gone is not an error.
func RemoveNamespace(ns string) error {
	if !exists(ns) {
		return nil
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		pids := pidsIn(ns)
		if len(pids) == 0 {
			break
		}
		if time.Now().After(deadline) {
			return bosherr.Errorf("Processes %v in namespace %s did not die", pids, ns)
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return ip("netns", "del", ns)
}

// SweepLeftovers removes the namespaces of earlier runs whose process is gone (a run killed with SIGKILL
// cannot clean up after itself).
func SweepLeftovers() error {
	out, err := exec.Command("ip", "netns", "list").Output()
	if err != nil {
		return bosherr.WrapError(err, "Listing network namespaces")
	}
	for _, line := range strings.Split(string(out), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 || !IsLeftover(fields[0]) {
			continue
		}
		if err := RemoveNamespace(fields[0]); err != nil {
			return err
		}
	}
	return nil
}

// IsLeftover tells whether name (a namespace, or anything named like one) belongs to a run whose process is gone.
func IsLeftover(name string) bool {
	rest, ok := strings.CutPrefix(name, namespaceRoot)
	if !ok {
		return false
	}
	digits, _, ok := strings.Cut(rest, "-")
	pid, err := strconv.Atoi(digits)
	if !ok || err != nil {
		return false
	}
	_, err = os.Stat("/proc/" + strconv.Itoa(pid))
	return os.IsNotExist(err)
}

func exists(ns string) bool {
	_, err := os.Stat("/run/netns/" + ns)
	return err == nil
}

// PIDsIn lists the processes whose network namespace is ns (none if it is gone).
func PIDsIn(ns string) []int { return pidsIn(ns) }

func pidsIn(ns string) []int {
	out, err := exec.Command("ip", "netns", "pids", ns).Output()
	if err != nil {
		return nil
	}
	var pids []int
	for _, f := range strings.Fields(string(out)) {
		if pid, err := strconv.Atoi(f); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}
