package main

import (
	"os"
	"strings"
	"time"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
	"github.com/prometheus/procfs"
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
