// Package publisher keeps the subnet file that docker's job and the flannel CNI plugin read, as root, equal to
// the last valid one that flanneld wrote.
//
// flanneld runs unprivileged under bpm and writes its subnet file into a directory of its own. docker's job
// sources the file it reads with bash, as root, so that file must be one that flanneld's user cannot write:
// the publisher, run as root outside bpm, reads flanneld's file with subnetenv's care, takes it only as
// flanneld writes it, and writes the copy from the parsed values into a directory that root alone can write,
// in one step (a new file renamed over the old one), each time flanneld writes its file anew. A file it refuses
// leaves the copy as it was; nothing removes the copy, as docker's job reads it when it stops too, but a copy
// restored at boot that flanneld has not followed with a file of its own within the lease's safe window.
package publisher

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
	boshlog "github.com/cloudfoundry/bosh-utils/logger"
	"github.com/google/renameio/v2"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/subnetenv"
)

// Interval is how often Run looks at flanneld's file.
const Interval = 200 * time.Millisecond

// Publisher copies From (flanneld's subnet file) to To (what docker's job and the CNI plugin read), and to Keep
// (when set) for Restore after a reboot.
type Publisher struct {
	From, To, Keep string
	Logger         boshlog.Logger
	// FlanneldReady, when set, tells whether the launcher reports flanneld ready: it runs, and holds its lease.
	FlanneldReady func() bool

	seen      fileID        // From as the last look left it
	failed    bool          // the last write failed: try again even if From did not change
	published subnetenv.Env // what Sync last published; none yet when zero
	refused   refusal       // the last refusal Sync returned
}

// New checks the paths: absolute, clean, and the copies in other directories than From's, since theirs must
// be root's alone. keep may be empty: no kept copy.
func New(from, to, keep string, logger boshlog.Logger) (*Publisher, error) {
	paths := []string{from, to}
	if keep != "" {
		paths = append(paths, keep)
	}
	for _, path := range paths {
		if err := CheckPath(path); err != nil {
			return nil, err
		}
	}
	for _, copied := range paths[1:] {
		if filepath.Dir(from) == filepath.Dir(copied) {
			return nil, bosherr.Errorf("'%s' and '%s' are in the same directory: the copy's must be root's alone", from, copied)
		}
	}
	return &Publisher{From: from, To: to, Keep: keep, Logger: logger}, nil
}

// Sync publishes each version of From once, as flanneld wrote it anew (a new lease, a restart): a From that
// is missing is no error, one that is refused gives a *RefusedError once and To stays as it is. A read that
// failed and a write that failed are tried again at the next call.
func (p *Publisher) Sync() error {
	id := identify(p.From)
	if id == p.seen && !p.failed {
		return nil
	}
	env, err := subnetenv.Read(p.From)
	if errors.Is(err, fs.ErrNotExist) {
		p.seen, p.failed = id, false
		return nil
	} else if err != nil {
		// p.seen stays, so the file is read again at the next call: a file half written in place, or an error
		// of the system (EIO, EMFILE), may pass. Each refusal is said once.
		if refused := (refusal{id, err.Error()}); refused != p.refused {
			p.refused = refused
			return &RefusedError{Err: err, To: p.To}
		}
		return nil
	}
	p.seen, p.failed = id, false
	if err := replace(p.To, env, time.Time{}); err != nil {
		p.failed = true
		return bosherr.WrapErrorf(err, "Writing '%s'", p.To)
	}
	p.published = env
	if err := p.keep(env, id.modified(), time.Now()); err != nil {
		p.failed = true
		return err
	}
	p.Logger.Info(logTag, "Published '%s' from '%s': %s", p.To, p.From, env)
	return nil
}

// recheck writes To again when it no longer holds what Sync last published: someone removed or changed it.
func (p *Publisher) recheck() error {
	if p.published == (subnetenv.Env{}) {
		return nil
	}
	held, err := subnetenv.ReadPublished(p.To)
	if err == nil && held == p.published {
		return nil
	}
	why := "it holds " + held.String()
	if err != nil {
		why = err.Error()
	}
	if err := replace(p.To, p.published, time.Time{}); err != nil {
		return bosherr.WrapErrorf(err, "Writing '%s' again (%s)", p.To, why)
	}
	p.Logger.Warn(logTag, "Published '%s' again, as it no longer held what was published (%s): %s", p.To, why, p.published)
	return nil
}

// CheckPath fails unless path is a clean absolute path to a file.
func CheckPath(path string) error {
	if !filepath.IsAbs(path) || filepath.Clean(path) != path || filepath.Dir(path) == path {
		return bosherr.Errorf("'%s' is not a clean absolute path to a file", path)
	}
	return nil
}

// replace writes env to path in one step, in a directory that root alone can write, modified at modified
// unless that is zero.
func replace(path string, env subnetenv.Env, modified time.Time) error {
	dir := filepath.Dir(path)
	if err := rootsAlone(dir); err != nil {
		return err
	}
	file, err := renameio.NewPendingFile(path, renameio.WithTempDir(dir), renameio.WithStaticPermissions(0o644))
	if err != nil {
		return err
	}
	defer file.Cleanup()
	if _, err := file.Write(env.Format()); err != nil {
		return err
	}
	if !modified.IsZero() {
		if err := os.Chtimes(file.Name(), modified, modified); err != nil {
			return err
		}
	}
	return file.CloseAtomicallyReplace()
}

// rootsAlone makes dir (mode 0755, whatever the umask: the launcher, vcap, reads the copy too) when there is
// none, and fails unless it is a directory that root alone can write: bin/start takes it back from an older
// release that gave it to flanneld.
func rootsAlone(dir string) error {
	if err := os.Mkdir(dir, 0o755); err == nil {
		if err := os.Chmod(dir, 0o755); err != nil {
			return err
		}
	} else if !errors.Is(err, fs.ErrExist) {
		return err
	}
	info, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if uid := info.Sys().(*syscall.Stat_t).Uid; !info.IsDir() || uid != 0 || info.Mode().Perm()&0o022 != 0 {
		return bosherr.Errorf("'%s' is not a directory that root alone can write (%s, owner uid %d)", dir, info.Mode(), uid)
	}
	return nil
}

// Run calls Sync at once and then at every tick until ctx ends, and logs what goes wrong: a refused file once
// (Sync says so once), a write that keeps failing when it first fails. At every mark it marks the kept copy
// current while flanneld holds its lease, withdraws a restored copy that has outlived its lease, and publishes
// again what To no longer holds.
func (p *Publisher) Run(ctx context.Context, ticks, marks <-chan time.Time) {
	for {
		failing := p.failed
		if err := p.Sync(); err != nil && !(failing && p.failed) {
			p.Logger.Error(logTag, "%s", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-ticks:
		case now := <-marks:
			if err := p.mark(now); err != nil {
				p.Logger.Error(logTag, "Marking the kept copy '%s' current: %s", p.Keep, err)
			}
			if err := p.withdraw(now); err != nil {
				p.Logger.Error(logTag, "%s", err)
			}
			if err := p.recheck(); err != nil {
				p.Logger.Error(logTag, "%s", err)
			}
		}
	}
}

// RefusedError is flanneld's subnet file refused: To keeps what it holds.
type RefusedError struct {
	Err error
	To  string
}

func (e *RefusedError) Error() string {
	return "Not publishing flanneld's subnet file, '" + e.To + "' stays as it is: " + e.Err.Error()
}

func (e *RefusedError) Unwrap() error { return e.Err }

// refusal is a version of From and why it was refused.
type refusal struct {
	id     fileID
	reason string
}

// fileID tells two versions of a file apart: a new file (flanneld renames one over the old) has another inode,
// and a change in place moves the change time, which no one can set back.
type fileID struct {
	dev, ino, size uint64
	mode           uint32
	mtime, ctime   syscall.Timespec
}

// identify is the file at path as it is now, or the zero fileID when there is none.
func identify(path string) fileID {
	var stat syscall.Stat_t
	if err := syscall.Lstat(path, &stat); err != nil {
		return fileID{}
	}
	return fileID{dev: stat.Dev, ino: stat.Ino, size: uint64(stat.Size), mode: stat.Mode, mtime: stat.Mtim, ctime: stat.Ctim}
}

// modified is the file's modification time.
func (id fileID) modified() time.Time {
	return time.Unix(id.mtime.Unix())
}

const logTag = "subnet-publisher"

// Published tells whether the copy at to holds what flanneld wrote at from, for those who wait on the
// publisher (wait-ready, the launcher): flanneld's values when it does; a *PendingError when the copy is
// missing, not root's alone or holds other values (the publisher has not caught up yet, or does not run); the
// error of reading flanneld's file otherwise: missing, or refused, and the copy will not follow it.
func Published(from, to string) (subnetenv.Env, error) {
	wrote, err := subnetenv.Read(from)
	if err != nil {
		return subnetenv.Env{}, err
	}
	copied, err := subnetenv.ReadPublished(to)
	if err != nil {
		return subnetenv.Env{}, &PendingError{Err: err}
	}
	if copied != wrote {
		return subnetenv.Env{}, &PendingError{Err: bosherr.Errorf("The published subnet file '%s' holds %s, flanneld wrote %s",
			to, copied, wrote)}
	}
	return wrote, nil
}

// PendingError is a copy that does not hold flanneld's file yet.
type PendingError struct {
	Err error
}

func (e *PendingError) Error() string { return e.Err.Error() }

func (e *PendingError) Unwrap() error { return e.Err }
