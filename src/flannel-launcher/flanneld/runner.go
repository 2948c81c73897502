package flanneld

import (
	"os"
	"strings"
	"time"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
	boshlog "github.com/cloudfoundry/bosh-utils/logger"
)

const logTag = "flanneld"

// DefaultKillAfter is how long flanneld gets to stop after the first forwarded signal; bpm stops a job within
// a few more seconds than that.
const DefaultKillAfter = 5 * time.Second

// Runner runs flanneld to its end. Started, when set, is called with flanneld's PID once it runs, before
// flanneld is waited for: until Started returns, the PID names flanneld, even should it have exited already.
// Stopping, when set, is called with the first stop signal, before it is passed on.
type Runner struct {
	Starter   Starter
	Logger    boshlog.Logger
	KillAfter time.Duration
	Started   func(pid int)
	Stopping  func(sig os.Signal)
}

// Run starts flanneld, passes each signal from stop on to it, and returns its exit status once it has ended.
// A flanneld still running KillAfter after the first signal is killed.
func (r Runner) Run(path string, args []string, stop <-chan os.Signal) (int, error) {
	process, err := r.Starter.Start(path, args)
	if err != nil {
		return 1, bosherr.WrapErrorf(err, "Starting flanneld '%s'", path)
	}
	r.Logger.Info(logTag, "flanneld started: pid=%d path=%s args='%s'", process.Pid(), path, strings.Join(args, " "))
	if r.Started != nil {
		r.Started(process.Pid())
	}

	ended := make(chan waitResult, 1)
	go func() {
		status, err := process.Wait()
		ended <- waitResult{status: status, err: err}
	}()

	var killTimer <-chan time.Time
	for {
		select {
		case result := <-ended:
			return r.finish(process.Pid(), result)
		case sig := <-stop:
			if killTimer == nil && r.Stopping != nil {
				r.Stopping(sig)
			}
			r.Logger.Info(logTag, "forwarding signal: signal=%s pid=%d", sig, process.Pid())
			if err := process.Signal(sig); err != nil {
				r.Logger.Warn(logTag, "forwarding signal failed: signal=%s pid=%d error='%s'", sig, process.Pid(), err)
			}
			if killTimer == nil {
				killTimer = time.After(r.KillAfter)
			}
		case <-killTimer:
			r.Logger.Warn(logTag, "flanneld still running, killing it: pid=%d waited=%s", process.Pid(), r.KillAfter)
			if err := process.Kill(); err != nil {
				r.Logger.Warn(logTag, "killing flanneld failed: pid=%d error='%s'", process.Pid(), err)
			}
		}
	}
}

type waitResult struct {
	status int
	err    error
}

func (r Runner) finish(pid int, result waitResult) (int, error) {
	if result.err != nil {
		return result.status, bosherr.WrapErrorf(result.err, "Waiting for flanneld (pid %d)", pid)
	}
	r.Logger.Info(logTag, "flanneld exited: pid=%d status=%d", pid, result.status)
	return result.status, nil
}
