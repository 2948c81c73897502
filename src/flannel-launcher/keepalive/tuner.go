package keepalive

import (
	"context"
	"errors"
	"time"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
	boshlog "github.com/cloudfoundry/bosh-utils/logger"
	"golang.org/x/sys/unix"
)

// Tuner sets Settings on the TCP sockets that one process holds to one remote port, each socket once. It
// reads only /proc and the process's sockets: it sends nothing to the peer. Not safe for concurrent use.
type Tuner struct {
	pid      int
	port     int
	settings Settings
	procRoot string
	logger   boshlog.Logger
	tuned    map[uint64]bool
}

// NewTuner tunes the sockets that pid holds to remotePort.
func NewTuner(pid, remotePort int, settings Settings, logger boshlog.Logger) *Tuner {
	return &Tuner{pid: pid, port: remotePort, settings: settings, procRoot: "/proc", logger: logger, tuned: map[uint64]bool{}}
}

// Run calls Cycle on every tick until ctx ends. A failure is logged when it differs from the one before, so a
// lasting one (say, no ptrace access) does not fill the log.
func (t *Tuner) Run(ctx context.Context, ticks <-chan time.Time) {
	lastFailure := ""
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticks:
			failure := ""
			if _, err := t.Cycle(); err != nil {
				failure = err.Error()
			}
			if failure != "" && failure != lastFailure {
				t.logger.Warn(logTag, "Tuning keepalive on pid %d's sockets to port %d failed, retrying: %s", t.pid, t.port, failure)
			}
			lastFailure = failure
		}
	}
}

// Cycle tunes the sockets not tuned yet and returns how many it tuned. Sockets that have closed are forgotten.
func (t *Tuner) Cycle() (int, error) {
	sockets, err := Sockets(t.procRoot, t.pid, t.port)
	if err != nil {
		return 0, bosherr.WrapErrorf(err, "Finding pid %d's sockets to port %d", t.pid, t.port)
	}
	tuned := map[uint64]bool{}
	pidfd := -1
	defer func() {
		if pidfd >= 0 {
			unix.Close(pidfd)
		}
	}()
	var failure error
	count := 0
	for _, socket := range sockets {
		if t.tuned[socket.Inode] {
			tuned[socket.Inode] = true
			continue
		}
		if pidfd < 0 {
			if pidfd, err = unix.PidfdOpen(t.pid, 0); err != nil {
				return 0, bosherr.WrapErrorf(err, "Opening a pidfd for pid %d%s", t.pid, hint(err))
			}
		}
		err := t.tune(pidfd, socket)
		if errors.Is(err, errGone) {
			continue
		}
		if err != nil {
			failure = err
			continue
		}
		tuned[socket.Inode] = true
		count++
		t.logger.Info(logTag, "Tuned keepalive: pid=%d fd=%d peer=%s idle=%s interval=%s count=%d user_timeout=%s",
			t.pid, socket.FD, socket.Peer, t.settings.Idle, t.settings.Interval, t.settings.Count, t.settings.UserTimeout)
	}
	t.tuned = tuned
	return count, failure
}

var errGone = errors.New("socket closed since it was listed")

// tune sets the options through a copy of the process's descriptor. The copy refers to the same socket, so
// closing it leaves the process's descriptor and the options in place.
func (t *Tuner) tune(pidfd int, socket Socket) error {
	copied, err := unix.PidfdGetfd(pidfd, socket.FD, 0)
	if errors.Is(err, unix.EBADF) {
		return errGone
	}
	if err != nil {
		return bosherr.WrapErrorf(err, "Copying pid %d's fd %d%s", t.pid, socket.FD, hint(err))
	}
	defer unix.Close(copied)
	var stat unix.Stat_t
	if err := unix.Fstat(copied, &stat); err != nil {
		return bosherr.WrapErrorf(err, "Checking pid %d's fd %d", t.pid, socket.FD)
	}
	if stat.Ino != socket.Inode {
		return errGone // the number was reused for another file
	}
	if err := t.settings.Apply(copied); err != nil {
		return bosherr.WrapErrorf(err, "Tuning pid %d's fd %d (peer %s)", t.pid, socket.FD, socket.Peer)
	}
	return nil
}

// hint names the usual causes of EPERM: a seccomp filter without the pidfd calls (bpm's profile for processes
// that are not privileged), or no ptrace access to the process.
func hint(err error) string {
	if !errors.Is(err, unix.EPERM) {
		return ""
	}
	return " (a seccomp filter, such as bpm's for unprivileged jobs, blocks pidfd_open/pidfd_getfd; or no ptrace" +
		" access: needs the same uid and no more capabilities than the launcher, or CAP_SYS_PTRACE)"
}
