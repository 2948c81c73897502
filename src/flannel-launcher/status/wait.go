package status

import (
	"context"
	"errors"
	"os"
	"time"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
)

// Waiter waits until a run reports flanneld ready, as the job's post-start does. It reads the status file
// every Interval, and once the run says ready it checks the subnet file itself: post-start runs as root on the
// host, outside bpm's mount namespace, so a subnet directory that bpm did not mount shows here.
type Waiter struct {
	StatusFile string
	SubnetFile string
	Interval   time.Duration
	// Progress, when set, is called with each status whose state, reason or PID differs from the one before.
	Progress func(Status)
}

// Wait returns the ready status, or an error saying why there is none: the run failed or was stopped (at
// once), the subnet file is missing, or ctx ended first (the error then says where the run was).
func (w Waiter) Wait(ctx context.Context) (Status, error) {
	start := time.Now()
	ticker := time.NewTicker(w.Interval)
	defer ticker.Stop()
	var last *Status
	var readErr error
	for {
		current, err := Read(w.StatusFile)
		readErr = err
		if err == nil {
			if last == nil || changed(*last, current) {
				w.progress(current)
			}
			last = &current
			if done, err := w.verdict(current); done {
				return current, err
			}
		}
		select {
		case <-ctx.Done():
			return Status{}, notInTime(last, readErr, w.StatusFile, time.Since(start))
		case <-ticker.C:
		}
	}
}

// verdict tells whether s ends the wait, and with which error.
func (w Waiter) verdict(s Status) (bool, error) {
	switch s.State {
	case Ready:
		if _, err := os.Stat(w.SubnetFile); err != nil {
			return true, bosherr.WrapErrorf(err, "The launcher reports flanneld ready, but its subnet file is not on the host "+
				"(was its directory missing when bpm started the job?)")
		}
		return true, nil
	case Failed:
		return true, bosherr.Errorf("the launcher failed: %s", s.Reason)
	case Stopped:
		return true, bosherr.Errorf("the launcher was stopped: %s", s.Reason)
	}
	return false, nil
}

func notInTime(last *Status, readErr error, path string, waited time.Duration) error {
	waited = waited.Round(time.Second)
	switch {
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
