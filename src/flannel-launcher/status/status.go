// Package status is the launcher's status file: what `run` is doing (starting, retrying, ready, failed,
// stopped) and why, kept up to date by the run, and waited on by `wait-ready` (the job's post-start, as root).
//
// The file is JSON, replaced whole on every change:
//
//	{"state": "retrying", "reason": "no etcd member answered ...", "flanneld_pid": 0,
//	 "started": "2025-01-01T00:00:00Z", "updated": "2025-01-01T00:00:03Z"}
package status

import "time"

// State is where a run is.
type State string

const (
	// Starting: the launcher is finding etcd, or flanneld runs but its subnet file is not written or not
	// published yet.
	Starting State = "starting"
	// Retrying: an attempt failed (the reason says how); the launcher tries again until its startup deadline.
	Retrying State = "retrying"
	// Ready: flanneld has written its subnet file since it started, and the job's subnet-publisher has published
	// it for docker's job and the CNI plugin.
	Ready State = "ready"
	// Failed: the run ended or will end without flanneld running (the reason says why).
	Failed State = "failed"
	// Stopped: a stop signal came; flanneld was told to stop.
	Stopped State = "stopped"
)

// Status is the content of the file.
type Status struct {
	State  State  `json:"state"`
	Reason string `json:"reason,omitempty"`
	// FlanneldPID is flanneld's PID as the launcher sees it (inside bpm's PID namespace), once it runs.
	FlanneldPID int       `json:"flanneld_pid,omitempty"`
	Started     time.Time `json:"started"`
	Updated     time.Time `json:"updated"`
}

// Final tells whether the run is over: nothing it writes later changes the state.
func (s Status) Final() bool {
	return s.State == Failed || s.State == Stopped
}

// String is the state and, when there is one, the reason: "retrying: attempt 2: ...".
func (s Status) String() string {
	if s.Reason == "" {
		return string(s.State)
	}
	return string(s.State) + ": " + s.Reason
}
