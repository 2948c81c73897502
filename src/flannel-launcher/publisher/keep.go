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

// MarkEvery is how often the kept copy is marked current while flanneld's file is there.
const MarkEvery = time.Minute

// keep writes the kept copy, as To is written.
func (p *Publisher) keep(env subnetenv.Env) error {
	if p.Keep == "" {
		return nil
	}
	return replace(p.Keep, env)
}

// mark sets the kept copy's modification time to now while flanneld's file is there: flanneld runs, and holds
// its lease.
func (p *Publisher) mark(now time.Time) error {
	if p.Keep == "" || identify(p.From) == (fileID{}) || identify(p.Keep) == (fileID{}) {
		return nil
	}
	return os.Chtimes(p.Keep, now, now)
}

// Restore writes the kept copy at keep to to when to is missing (a reboot emptied /run) and the copy was marked
// current less than KeepFor before now. It tells whether it did. A copy that is too old or that is not root's
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
	if err := replace(to, env); err != nil {
		return false, bosherr.WrapErrorf(err, "Restoring '%s' from '%s'", to, keep)
	}
	return true, nil
}
