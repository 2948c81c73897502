package status

import (
	"sync"
	"time"

	boshlog "github.com/cloudfoundry/bosh-utils/logger"
)

// Recorder keeps one run's status file up to date. A write that fails is logged and the run goes on: the
// file is for whoever waits on the run, flanneld does not need it. Once the run is Final, later changes are
// ignored, so that a late "ready" cannot hide why the run ended.
type Recorder struct {
	path    string
	logger  boshlog.Logger
	now     func() time.Time
	mu      sync.Mutex
	current Status
}

// NewRecorder starts a run's status in state Starting and writes it to path, replacing what an earlier run
// left there. An empty path keeps the status in memory only.
func NewRecorder(path string, logger boshlog.Logger, now func() time.Time) *Recorder {
	r := &Recorder{path: path, logger: logger, now: now}
	started := now()
	r.current = Status{State: Starting, Started: started}
	r.update(func(s *Status) {})
	return r
}

// Retrying says that an attempt failed and another will follow.
func (r *Recorder) Retrying(reason string) {
	r.update(func(s *Status) { s.State, s.Reason = Retrying, reason })
}

// FlanneldStarted says that flanneld runs with pid and the run now waits for what reason says.
func (r *Recorder) FlanneldStarted(pid int, reason string) {
	r.update(func(s *Status) { s.State, s.Reason, s.FlanneldPID = Starting, reason, pid })
}

// Waiting says that flanneld runs and the run waits for what reason says.
func (r *Recorder) Waiting(reason string) {
	r.update(func(s *Status) { s.State, s.Reason = Starting, reason })
}

// Ready says that flanneld's subnet file is published.
func (r *Recorder) Ready(reason string) {
	r.update(func(s *Status) { s.State, s.Reason = Ready, reason })
}

// Failed says that the run ends without flanneld running, and why.
func (r *Recorder) Failed(reason string) {
	r.update(func(s *Status) { s.State, s.Reason = Failed, reason })
}

// Stopped says that a stop signal came.
func (r *Recorder) Stopped(reason string) {
	r.update(func(s *Status) { s.State, s.Reason = Stopped, reason })
}

// Current is the status as last recorded.
func (r *Recorder) Current() Status {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.current
}

func (r *Recorder) update(change func(*Status)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.current.Final() {
		return
	}
	change(&r.current)
	r.current.Updated = r.now()
	if r.path == "" {
		return
	}
	if err := Write(r.path, r.current); err != nil {
		r.logger.Error(logTag, "%s (state %s: %s)", err, r.current.State, r.current.Reason)
	}
}

const logTag = "status"
