package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
	"github.com/prometheus/procfs"
	"golang.org/x/sys/unix"
)

// cpuTime is the user and system CPU time pid has used, from /proc/<pid>/stat (10 ms ticks).
func cpuTime(pid int) (time.Duration, error) {
	proc, err := procfs.NewProc(pid)
	if err != nil {
		return 0, bosherr.WrapErrorf(err, "Finding process %d", pid)
	}
	stat, err := proc.Stat()
	if err != nil {
		return 0, bosherr.WrapErrorf(err, "Reading the CPU time of process %d", pid)
	}
	return time.Duration(stat.CPUTime() * float64(time.Second)), nil
}

func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return err.Error()
	}
	return strings.TrimSpace(string(data))
}

// pin keeps every thread of pid on cpu; threads made later inherit it from the thread that makes them.
func pin(pid, cpu int) error {
	var set unix.CPUSet
	set.Set(cpu)
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return bosherr.WrapErrorf(err, "Listing the threads of %d", pid)
	}
	for _, task := range tasks {
		tid, err := strconv.Atoi(task.Name())
		if err != nil {
			continue
		}
		if err := unix.SchedSetaffinity(tid, &set); err != nil && err != unix.ESRCH {
			return bosherr.WrapErrorf(err, "Pinning thread %d of %d to CPU %d", tid, pid, cpu)
		}
	}
	return nil
}
