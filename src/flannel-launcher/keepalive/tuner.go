package keepalive

import (
	"context"
	"errors"
	"net"
	"time"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
	boshlog "github.com/cloudfoundry/bosh-utils/logger"
	"golang.org/x/sys/unix"
)

// Tuner sets Settings on the TCP sockets that one process holds to one remote port, each socket once. It
// reads /proc and the process's sockets: it sends nothing to the peer. Not safe for concurrent use.
type Tuner struct {
	process  *Process
	pid      int // for messages
	port     int
	settings Settings
	logger   boshlog.Logger
	done     map[uint64]bool // sockets tuned, or not to tune (another kind, another port, a listener)
}

// NewTuner tunes the sockets that the process holds to remotePort.
func NewTuner(process *Process, remotePort int, settings Settings, logger boshlog.Logger) *Tuner {
	return &Tuner{process: process, pid: process.PID(), port: remotePort, settings: settings, logger: logger, done: map[uint64]bool{}}
}

// Run calls Cycle on every tick until ctx ends, logging failures (see onTicks). It returns a *RefusedError
// when the kernel refuses the pidfd calls for good, which retrying cannot fix; nil when ctx ends.
func (t *Tuner) Run(ctx context.Context, ticks <-chan time.Time) error {
	return onTicks(ctx, ticks, func() error { _, err := t.Cycle(); return err }, func(err error) {
		t.logger.Warn(logTag, "Tuning keepalive on pid %d's sockets to port %d failed, retrying: %s", t.pid, t.port, err)
	})
}

// Cycle looks at each socket the process has opened since the last cycle, tunes those connected to the port,
// and returns how many it tuned. Sockets that have closed are forgotten. In steady state a cycle only lists
// /proc/<pid>/fd.
func (t *Tuner) Cycle() (int, error) {
	sockets, err := t.process.sockets()
	if err != nil {
		return 0, bosherr.WrapErrorf(err, "Finding pid %d's sockets", t.pid)
	}
	done := map[uint64]bool{}
	pidfd := -1
	var failure error
	count := 0
	for _, socket := range sockets {
		if t.done[socket.inode] {
			done[socket.inode] = true
			continue
		}
		if pidfd < 0 {
			if pidfd, err = t.process.pidFD(); err != nil {
				return 0, refused(bosherr.WrapErrorf(err, "Opening a pidfd for pid %d%s", t.pid, hint(err)), err)
			}
		}
		tuned, err := t.visit(pidfd, socket)
		if errors.Is(err, errGone) || errors.Is(err, errNotYet) {
			continue
		}
		var refusal *RefusedError
		if errors.As(err, &refusal) {
			return 0, err
		}
		if err != nil {
			failure = err
			continue
		}
		done[socket.inode] = true
		if tuned {
			count++
		}
	}
	t.done = done
	return count, failure
}

var (
	errGone   = errors.New("socket closed since it was listed")
	errNotYet = errors.New("TCP socket not connected yet")
)

// visit looks at one socket through a copy of the process's descriptor and tunes it when it is a TCP
// connection to the port. The copy names the same socket, so closing it leaves the process's descriptor and
// the options in place.
func (t *Tuner) visit(pidfd int, socket socketFD) (bool, error) {
	copied, err := unix.PidfdGetfd(pidfd, socket.fd, 0)
	if errors.Is(err, unix.EBADF) {
		return false, errGone
	}
	if err != nil {
		return false, refused(bosherr.WrapErrorf(err, "Copying pid %d's fd %d%s", t.pid, socket.fd, hint(err)), err)
	}
	defer unix.Close(copied)
	var stat unix.Stat_t
	if err := unix.Fstat(copied, &stat); err != nil || stat.Ino != socket.inode {
		return false, errGone // the number was reused for another file
	}
	peer, err := tcpPeer(copied)
	if err != nil || peer == nil || peer.Port != t.port {
		return false, err
	}
	if err := t.settings.Apply(copied); err != nil {
		return false, bosherr.WrapErrorf(err, "Tuning pid %d's fd %d (peer %s)", t.pid, socket.fd, peer)
	}
	t.logger.Info(logTag, "Tuned keepalive: pid=%d fd=%d peer=%s idle=%s interval=%s count=%d user_timeout=%s",
		t.pid, socket.fd, peer, t.settings.Idle, t.settings.Interval, t.settings.Count, t.settings.UserTimeout)
	return true, nil
}

// tcpPeer returns the peer of a connected TCP socket, nil for any other socket, or errNotYet for a TCP socket
// that is still connecting (the kernel names no peer before the handshake is done).
func tcpPeer(fd int) (*net.TCPAddr, error) {
	protocol, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_PROTOCOL)
	if err != nil || protocol != unix.IPPROTO_TCP {
		return nil, nil // a unix or netlink socket, say
	}
	if listening, _ := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ACCEPTCONN); listening == 1 {
		return nil, nil
	}
	peer, err := unix.Getpeername(fd)
	if errors.Is(err, unix.ENOTCONN) {
		return nil, errNotYet
	}
	if err != nil {
		return nil, bosherr.WrapError(err, "Reading a TCP socket's peer")
	}
	switch addr := peer.(type) {
	case *unix.SockaddrInet4:
		return &net.TCPAddr{IP: addr.Addr[:], Port: addr.Port}, nil
	case *unix.SockaddrInet6:
		return &net.TCPAddr{IP: addr.Addr[:], Port: addr.Port}, nil
	}
	return nil, nil
}

// hint names the usual causes of a refusal: a seccomp filter without the pidfd calls (bpm's profile for
// processes that are not privileged), no ptrace access to the process, or a kernel without the calls.
func hint(err error) string {
	switch {
	case errors.Is(err, unix.EPERM), errors.Is(err, unix.EACCES):
		return " (a seccomp filter, such as bpm's for unprivileged jobs, blocks pidfd_open/pidfd_getfd; or no ptrace" +
			" access: needs the same uid and no more capabilities than the launcher, or CAP_SYS_PTRACE)"
	case errors.Is(err, unix.ENOSYS):
		return " (the kernel has no pidfd_getfd before Linux 5.6, no pidfd_open before 5.3)"
	}
	return ""
}

// RefusedError is a failure of the pidfd calls that stays for the process's life: EPERM or EACCES (a seccomp
// filter, missing ptrace access) or ENOSYS (a kernel without the call). Reaper is the fallback for it.
type RefusedError struct{ Err error }

func (e *RefusedError) Error() string { return e.Err.Error() }

// refused marks wrapped as a RefusedError when cause is a lasting refusal (bosherr's wrapping hides the cause
// from errors.Is).
func refused(wrapped, cause error) error {
	for _, lasting := range []unix.Errno{unix.EPERM, unix.EACCES, unix.ENOSYS} {
		if errors.Is(cause, lasting) {
			return &RefusedError{Err: wrapped}
		}
	}
	return wrapped
}
