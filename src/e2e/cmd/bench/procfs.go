package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
	"golang.org/x/sys/unix"
)

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat's start time; 100 on every Linux build we run on.
const clockTicks = 100

// processStart is when pid started, from /proc/<pid>/stat (10 ms resolution). The kernel counts it from
// boot on CLOCK_BOOTTIME, so it is moved to the wall clock with the current offset between the two.
func processStart(pid int) (time.Time, error) {
	if pid == 0 {
		return time.Time{}, bosherr.Error("No process to read the start time of")
	}
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return time.Time{}, bosherr.WrapErrorf(err, "Reading the start time of process %d", pid)
	}
	// The command name, in parentheses, may hold spaces: fields are counted after its closing one.
	fields := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
	if len(fields) < 20 {
		return time.Time{}, bosherr.Errorf("Short /proc/%d/stat: %q", pid, data)
	}
	ticks, err := strconv.ParseInt(fields[19], 10, 64) // field 22 of proc(5)
	if err != nil {
		return time.Time{}, bosherr.WrapErrorf(err, "Parsing the start time of process %d", pid)
	}
	var boot unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &boot); err != nil {
		return time.Time{}, bosherr.WrapError(err, "Reading CLOCK_BOOTTIME")
	}
	now := time.Now()
	sinceStart := time.Duration(boot.Nano()) - time.Duration(ticks)*time.Second/clockTicks
	return now.Add(-sinceStart), nil
}

// memory is the resident memory of a process, in KiB, from /proc/<pid>/status.
type memory struct {
	pid                   int
	command               string
	rss, anon, file, peak int // VmRSS, RssAnon, RssFile, VmHWM
}

func readMemory(pid int) (memory, error) {
	m := memory{pid: pid}
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return m, bosherr.WrapErrorf(err, "Reading the memory of process %d", pid)
	}
	fields := map[string]*int{"VmRSS": &m.rss, "RssAnon": &m.anon, "RssFile": &m.file, "VmHWM": &m.peak}
	for _, line := range strings.Split(string(data), "\n") {
		key, value, _ := strings.Cut(line, ":")
		if key == "Name" {
			m.command = strings.TrimSpace(value)
		}
		if target, ok := fields[key]; ok {
			*target, _ = strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(value), " kB"))
		}
	}
	return m, nil
}

// etcdConnections counts pid's TCP connections to port 2379, from its socket descriptors and the TCP
// table of its network namespace.
func etcdConnections(pid int) (int, error) {
	proc := "/proc/" + strconv.Itoa(pid)
	fds, err := filepath.Glob(proc + "/fd/*")
	if err != nil {
		return 0, bosherr.WrapErrorf(err, "Listing the descriptors of process %d", pid)
	}
	sockets := map[string]bool{}
	for _, fd := range fds {
		if target, err := os.Readlink(fd); err == nil && strings.HasPrefix(target, "socket:[") {
			sockets[strings.TrimSuffix(strings.TrimPrefix(target, "socket:["), "]")] = true
		}
	}
	n := 0
	for _, table := range []string{"/net/tcp", "/net/tcp6"} {
		data, err := os.ReadFile(proc + table)
		if err != nil {
			return 0, bosherr.WrapErrorf(err, "Reading the TCP table of process %d", pid)
		}
		for _, line := range strings.Split(string(data), "\n")[1:] {
			f := strings.Fields(line)
			// remote address is field 2 (address:port in hex), the inode field 9
			if len(f) > 9 && strings.HasSuffix(f[2], ":094B") && sockets[f[9]] {
				n++
			}
		}
	}
	return n, nil
}
