package keepalive

import (
	"errors"
	"os"
	"strconv"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
	"golang.org/x/sys/unix"
)

// Process is a handle on one process, flanneld, that its PID cannot outlive: an open /proc/<pid> directory.
// Once that process has been waited for, lookups under the directory fail, even when the PID names another
// process by then, so the Tuner and the Reaper never look at another process's descriptors or sockets.
type Process struct {
	pid   int
	dir   int // /proc/<pid>
	pidfd int // -1 until the Tuner first needs it
}

// OpenProcess takes the handle. pid must name the process for sure when it is called: the caller's child that
// it has not waited for yet (flanneld.Runner calls Started before it waits), or a process known to run.
func OpenProcess(pid int) (*Process, error) {
	dir, err := unix.Open("/proc/"+strconv.Itoa(pid), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, bosherr.WrapErrorf(err, "Opening /proc/%d", pid)
	}
	return &Process{pid: pid, dir: dir, pidfd: -1}, nil
}

// PID is the process's number, for messages.
func (p *Process) PID() int { return p.pid }

// Close releases the handle.
func (p *Process) Close() error {
	if p.pidfd >= 0 {
		unix.Close(p.pidfd)
	}
	return unix.Close(p.dir)
}

// errEnded is what looking at a process that has been waited for gives.
var errEnded = errors.New("the process has ended")

// sockets lists the process's descriptors that are sockets ("socket:[inode]" in /proc/<pid>/fd).
func (p *Process) sockets() ([]socketFD, error) {
	fd, err := unix.Openat(p.dir, "fd", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ESRCH) {
		return nil, bosherr.WrapErrorf(errEnded, "Listing pid %d's descriptors", p.pid)
	}
	if err != nil {
		return nil, bosherr.WrapErrorf(err, "Listing pid %d's descriptors", p.pid)
	}
	dir := os.NewFile(uintptr(fd), "/proc/"+strconv.Itoa(p.pid)+"/fd")
	defer dir.Close()
	names, err := dir.Readdirnames(-1)
	if err != nil {
		return nil, bosherr.WrapErrorf(err, "Listing pid %d's descriptors", p.pid)
	}
	var sockets []socketFD
	buf := make([]byte, 64)
	for _, name := range names {
		n, err := unix.Readlinkat(fd, name, buf)
		if err != nil {
			continue // closed since the listing
		}
		if inode, ok := socketInode(string(buf[:n])); ok {
			number, _ := strconv.Atoi(name)
			sockets = append(sockets, socketFD{fd: number, inode: inode})
		}
	}
	return sockets, nil
}

// pidFD returns a pidfd for the process, opened the first time. pidfd_open goes by number, so the handle's
// directory is checked afterwards: while it still answers, the process has not been waited for, and the number
// named it all along.
func (p *Process) pidFD() (int, error) {
	if p.pidfd >= 0 {
		return p.pidfd, nil
	}
	pidfd, err := unix.PidfdOpen(p.pid, 0)
	if err != nil {
		return -1, err
	}
	if err := unix.Faccessat(p.dir, "stat", unix.F_OK, 0); err != nil {
		unix.Close(pidfd)
		return -1, errEnded
	}
	p.pidfd = pidfd
	return pidfd, nil
}
