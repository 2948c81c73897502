package status

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"time"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/publisher"
)

// Waiter waits until a run reports flanneld ready, as the job's post-start does. It reads the status file
// every Interval, and once the run says ready it looks at the subnet files itself: post-start runs as root on
// the host, outside bpm's mount namespace, so a subnet directory that bpm did not mount shows here, and ready
// means that the copy docker's job and the CNI plugin read holds what flanneld wrote.
type Waiter struct {
	StatusFile string
	// SubnetFile is flanneld's; PublishedFile the copy that the job's subnet-publisher writes, as root.
	SubnetFile, PublishedFile string
	Interval                  time.Duration
	// Progress, when set, is called with each status whose state, reason or PID differs from the one before.
	Progress func(Status)
}

// Wait returns the ready status, or an error saying why there is none: the run failed or was stopped (at
// once), flanneld's subnet file is missing or refused (at once), or ctx ended first (the error then says where
// the run was, or why its subnet file is not published yet).
func (w Waiter) Wait(ctx context.Context) (Status, error) {
	start := time.Now()
	ticker := time.NewTicker(w.Interval)
	defer ticker.Stop()
	var last *Status
	var readErr, unpublished error
	for {
		current, err := Read(w.StatusFile)
		readErr = err
		if err == nil {
			if last == nil || changed(*last, current) {
				w.progress(current)
			}
			last = &current
			var done bool
			if done, unpublished, err = w.verdict(current); done {
				return current, err
			}
		}
		select {
		case <-ctx.Done():
			return Status{}, notInTime(last, readErr, unpublished, w.StatusFile, time.Since(start))
		case <-ticker.C:
		}
	}
}

// verdict tells whether s ends the wait, and with which error; for a ready run whose subnet file is not
// published yet, it says why.
func (w Waiter) verdict(s Status) (done bool, unpublished, err error) {
	switch s.State {
	case Ready:
		return w.published()
	case Failed:
		return true, nil, bosherr.Errorf("the launcher failed: %s", s.Reason)
	case Stopped:
		return true, nil, bosherr.Errorf("the launcher was stopped: %s", s.Reason)
	}
	return false, nil, nil
}

// published tells whether the copy holds what flanneld wrote. A flanneld file that is missing or refused ends
// the wait: the copy will not follow it.
func (w Waiter) published() (done bool, unpublished, err error) {
	_, err = publisher.Published(w.SubnetFile, w.PublishedFile)
	var pending *publisher.PendingError
	switch {
	case err == nil:
		return true, nil, nil
	case errors.As(err, &pending):
		return false, pending.Err, nil
	case errors.Is(err, fs.ErrNotExist):
		return true, nil, bosherr.WrapErrorf(err, "The launcher reports flanneld ready, but its subnet file is not on the host "+
			"(was its directory missing when bpm started the job?)")
	}
	return true, nil, bosherr.WrapError(err, "flanneld wrote a subnet file that is not published")
}

func notInTime(last *Status, readErr, unpublished error, path string, waited time.Duration) error {
	waited = waited.Round(time.Second)
	switch {
	case last != nil && last.State == Ready && unpublished != nil:
		return bosherr.WrapErrorf(unpublished, "%s, but after %s the copy that docker's job and the CNI plugin read does "+
			"not hold it (is the job's subnet-publisher running?)", last.Reason, waited)
	case last != nil:
		return bosherr.Errorf("still %s after %s: %s", last.State, waited, last.Reason)
	case errors.Is(readErr, os.ErrNotExist):
		return bosherr.Errorf("the launcher wrote no status to '%s' in %s (is the job running?)", path, waited)
	default:
		return bosherr.WrapErrorf(readErr, "No status after %s", waited)
	}
}

func (w Waiter) progress(s Status) {
	if w.Progress != nil {
		w.Progress(s)
	}
}

func changed(a, b Status) bool {
	return a.State != b.State || a.Reason != b.Reason || a.FlanneldPID != b.FlanneldPID
}
