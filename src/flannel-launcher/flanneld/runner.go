package flanneld

import (
	"os"
	"strings"
	"syscall"
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
// Stopping, when set, is called with the first stop signal, before it is passed on. Each value from Restarts
// (nil: none) stops flanneld as a stop signal would, then starts it again with those arguments.
type Runner struct {
	Starter   Starter
	Logger    boshlog.Logger
	KillAfter time.Duration
	Started   func(pid int)
	Stopping  func(sig os.Signal)
	Restarts  <-chan []string
}

// Run starts flanneld, passes each signal from stop on to it, and returns its exit status once it has ended.
// A flanneld still running KillAfter after the first signal is killed. A stop signal during a restart ends it:
// flanneld is not started again.
func (r Runner) Run(path string, args []string, stop <-chan os.Signal) (int, error) {
	process, ended, err := r.start(path, args)
	if err != nil {
		return 1, err
	}
	var killTimer <-chan time.Time
	var restartArgs []string // while flanneld stops for a restart
	stopping := false
	for {
		select {
		case result := <-ended:
			if restartArgs == nil || result.err != nil {
				return r.finish(process.Pid(), result)
			}
			r.Logger.Info(logTag, "flanneld stopped for a restart: pid=%d status=%d", process.Pid(), result.status)
			if process, ended, err = r.start(path, restartArgs); err != nil {
				return 1, err
			}
			killTimer, restartArgs = nil, nil
		case args := <-r.Restarts:
			if stopping || restartArgs != nil {
				continue
			}
			restartArgs = args
			r.Logger.Info(logTag, "restarting flanneld: pid=%d", process.Pid())
			r.signal(process, syscall.SIGTERM)
			killTimer = time.After(r.KillAfter)
		case sig := <-stop:
			if !stopping && r.Stopping != nil {
				r.Stopping(sig)
			}
			stopping, restartArgs = true, nil
			r.Logger.Info(logTag, "forwarding signal: signal=%s pid=%d", sig, process.Pid())
			r.signal(process, sig)
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

// start starts flanneld and waits for it in the background; Started is told its PID first.
func (r Runner) start(path string, args []string) (Process, <-chan waitResult, error) {
	process, err := r.Starter.Start(path, args)
	if err != nil {
		return nil, nil, bosherr.WrapErrorf(err, "Starting flanneld '%s'", path)
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
	return process, ended, nil
}

func (r Runner) signal(process Process, sig os.Signal) {
	if err := process.Signal(sig); err != nil {
		r.Logger.Warn(logTag, "forwarding signal failed: signal=%s pid=%d error='%s'", sig, process.Pid(), err)
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
