package publisher

import (
	"errors"
	"io/fs"
	"os"
	"time"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/subnetenv"
)

// A reboot empties /run, and with it the published file that docker's job sources when monit starts it, before
// flanneld has written a file again. The publisher keeps a second copy on the ephemeral disk, which a reboot
// keeps, and restores it at boot, while it is surely still this node's subnet.

// KeepFor is how long after it was last marked current a kept copy is restored. While flanneld runs, its lease
// never has less than an hour left (it renews it an hour before the end), so a node back within the hour gets
// the same subnet; ten minutes are left for the boot and for the clocks.
const KeepFor = 50 * time.Minute

// MarkEvery is how often the kept copy is marked current while flanneld runs.
const MarkEvery = time.Minute

// keep writes env, read from flanneld's file as modified at written, to the kept copy, marked current at now
// (its modification time) in the same step, when flanneld holds that lease now (maintained). A kept copy that
// could not be written goes: an older one, marked current before, may hold a lease that flanneld no longer
// holds.
func (p *Publisher) keep(env subnetenv.Env, written, now time.Time) error {
	if p.Keep == "" || !p.maintained(written, now) {
		return nil
	}
	err := replace(p.Keep, env, now)
	if err == nil {
		return nil
	}
	if removeErr := os.Remove(p.Keep); removeErr != nil && !errors.Is(removeErr, fs.ErrNotExist) {
		return bosherr.WrapErrorf(err, "Writing the kept copy '%s' (and removing the older one: %s)", p.Keep, removeErr)
	}
	return bosherr.WrapErrorf(err, "Writing the kept copy '%s' (the older one is removed)", p.Keep)
}

// maintained tells whether flanneld holds the lease of the file it modified at written: the launcher reports
// it ready (flanneld runs and renews its lease), or flanneld wrote the file less than MarkEvery before now (it
// does once it holds the lease, before the launcher reports ready). A file left by a flanneld that crashed or
// was stopped is neither.
func (p *Publisher) maintained(written, now time.Time) bool {
	if p.FlanneldReady != nil && p.FlanneldReady() {
		return true
	}
	age := now.Sub(written)
	return age < MarkEvery && age > -MarkEvery
}

// mark writes the kept copy anew from flanneld's file, marked current at now, while flanneld holds its lease.
// Otherwise, and while flanneld's file is missing or refused (Sync says why), the copy keeps its last mark,
// and ages.
func (p *Publisher) mark(now time.Time) error {
	if p.Keep == "" {
		return nil
	}
	id := identify(p.From)
	env, err := subnetenv.Read(p.From)
	if err != nil {
		return nil
	}
	return p.keep(env, id.modified(), now)
}

// withdraw removes the published file when it was restored (the publisher has published nothing since it
// started) and its mark, which Restore gave it, is more than KeepFor before now: flanneld has not written its
// file in that time, and the lease in the copy may have gone to another node.
func (p *Publisher) withdraw(now time.Time) error {
	if p.published != (subnetenv.Env{}) {
		return nil
	}
	info, err := os.Lstat(p.To)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	} else if err != nil {
		return err
	}
	age := now.Sub(info.ModTime())
	if age <= KeepFor {
		return nil
	}
	if err := os.Remove(p.To); err != nil {
		return bosherr.WrapErrorf(err, "Withdrawing the restored subnet file '%s'", p.To)
	}
	p.Logger.Warn(logTag, "Withdrew '%s', restored from the kept copy: it was last current %s ago, more than %s, and flanneld "+
		"has written no subnet file since; its lease may be gone", p.To, age.Round(time.Second), KeepFor)
	return nil
}

// Restore writes the kept copy at keep to to when to is missing (a reboot emptied /run) and the copy was marked
// current less than KeepFor before now, with the copy's mark as its modification time (withdraw goes by it). It
// tells whether it did. A copy that is too old or that is not root's
// alone is left alone, with an error that says why.
func Restore(keep, to string, now time.Time) (bool, error) {
	if _, err := os.Lstat(to); err == nil || !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	env, err := subnetenv.ReadPublished(keep)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	info, err := os.Lstat(keep)
	if err != nil {
		return false, err
	}
	if age := now.Sub(info.ModTime()); age > KeepFor || age < -KeepFor {
		return false, bosherr.Errorf("The kept subnet file '%s' was last current %s ago, more than %s: not restored, flanneld's lease may be gone",
			keep, age.Round(time.Second), KeepFor)
	}
	if err := replace(to, env, info.ModTime()); err != nil {
		return false, bosherr.WrapErrorf(err, "Restoring '%s' from '%s'", to, keep)
	}
	return true, nil
}
