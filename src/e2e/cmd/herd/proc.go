package main

import (
	"fmt"
	"os"
	"strconv"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
	"golang.org/x/sys/unix"
)

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
