// Package procstats reads what the benchmarks report of a process and of the host from /proc, through
// prometheus/procfs: start time, CPU time (in ticks, and the scheduler's own count), resident memory, TCP
// connections to a port, load average, and whether a process still runs.
package procstats

import (
	"fmt"
	"time"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
	"github.com/prometheus/procfs"
	"golang.org/x/sys/unix"
)

// userHZ is the unit of /proc/<pid>/stat's start time; 100 on every Linux build we run on.
const userHZ = 100

// Start is when pid started (10 ms resolution). The kernel counts it from boot on CLOCK_BOOTTIME;
// procfs adds the boot time in whole seconds, so the current offset between the two clocks is used instead.
func Start(pid int) (time.Time, error) {
	stat, err := stat(pid)
	if err != nil {
		return time.Time{}, err
	}
	var boot unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &boot); err != nil {
		return time.Time{}, bosherr.WrapError(err, "Reading CLOCK_BOOTTIME")
	}
	sinceStart := time.Duration(boot.Nano()) - time.Duration(stat.Starttime)*time.Second/userHZ
	return time.Now().Add(-sinceStart), nil
}

// CPUTime is the user and system CPU time pid has used (10 ms ticks).
func CPUTime(pid int) (time.Duration, error) {
	stat, err := stat(pid)
	if err != nil {
		return 0, err
	}
	return time.Duration(stat.CPUTime() * float64(time.Second)), nil
}

// OnCPU is how long pid's threads have run, summed from the scheduler's own nanosecond counts
// (/proc/<pid>/task/*/schedstat): for a process that uses a few milliseconds, whose CPUTime the 10 ms ticks
// round down to nothing. A thread that has exited is not counted; a Go program's threads seldom exit.
func OnCPU(pid int) (time.Duration, error) {
	threads, err := procfs.AllThreads(pid)
	if err != nil {
		return 0, bosherr.WrapErrorf(err, "Listing the threads of process %d", pid)
	}
	var total time.Duration
	for _, thread := range threads {
		sched, err := thread.Schedstat()
		if err != nil {
			continue // the thread exited meanwhile
		}
		total += time.Duration(sched.RunningNanoseconds)
	}
	return total, nil
}

// Running tells whether pid is a process that has not died: a dead one whose parent has not reaped it yet (a
// zombie) does not run, and holds no socket or file any more. An orphan's parent is the host's init, which
// here reaps them only every second or two.
func Running(pid int) bool {
	s, err := stat(pid)
	return err == nil && s.State != "Z" && s.State != "X"
}

func stat(pid int) (procfs.ProcStat, error) {
	if pid == 0 {
		return procfs.ProcStat{}, bosherr.Error("No process to read /proc/<pid>/stat of")
	}
	proc, err := procfs.NewProc(pid)
	if err != nil {
		return procfs.ProcStat{}, bosherr.WrapErrorf(err, "Finding process %d", pid)
	}
	s, err := proc.Stat()
	if err != nil {
		return s, bosherr.WrapErrorf(err, "Reading /proc/%d/stat", pid)
	}
	return s, nil
}

// Memory is a process's resident memory, from /proc/<pid>/status.
type Memory struct {
	Command               string
	RSS, Anon, File, Peak uint64 // bytes: VmRSS, RssAnon, RssFile, VmHWM
}

// ReadMemory reads pid's resident memory.
func ReadMemory(pid int) (Memory, error) {
	proc, err := procfs.NewProc(pid)
	if err != nil {
		return Memory{}, bosherr.WrapErrorf(err, "Finding process %d", pid)
	}
	s, err := proc.NewStatus()
	if err != nil {
		return Memory{}, bosherr.WrapErrorf(err, "Reading the memory of process %d", pid)
	}
	return Memory{Command: s.Name, RSS: s.VmRSS, Anon: s.RssAnon, File: s.RssFile, Peak: s.VmHWM}, nil
}

// ConnectionsTo counts pid's TCP connections to a remote port, IPv4 and IPv6: its socket descriptors
// matched against the TCP tables of its own network namespace.
func ConnectionsTo(pid int, port uint64) (int, error) {
	proc, err := procfs.NewProc(pid)
	if err != nil {
		return 0, bosherr.WrapErrorf(err, "Finding process %d", pid)
	}
	targets, err := proc.FileDescriptorTargets()
	if err != nil {
		return 0, bosherr.WrapErrorf(err, "Listing the descriptors of process %d", pid)
	}
	sockets := map[string]bool{}
	for _, target := range targets {
		sockets[target] = true
	}
	netns, err := procfs.NewFS(fmt.Sprintf("/proc/%d", pid)) // its net/tcp is its namespace's table
	if err != nil {
		return 0, bosherr.WrapErrorf(err, "Opening /proc/%d", pid)
	}
	n := 0
	for _, read := range []func() (procfs.NetTCP, error){netns.NetTCP, netns.NetTCP6} {
		table, err := read()
		if err != nil {
			return 0, bosherr.WrapErrorf(err, "Reading the TCP table of process %d", pid)
		}
		for _, line := range table {
			if line.RemPort == port && sockets[fmt.Sprintf("socket:[%d]", line.Inode)] {
				n++
			}
		}
	}
	return n, nil
}

// LoadAverage is the host's 1, 5 and 15 minute load average, or why it could not be read.
func LoadAverage() string {
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return err.Error()
	}
	load, err := fs.LoadAvg()
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf("%.2f %.2f %.2f", load.Load1, load.Load5, load.Load15)
}
