package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"

	"github.com/flannel-dns/flannel-dns/src/e2e/monit"
)

// StepError is a lifecycle step that failed, with what the job's script printed: what `bosh deploy` reports.
type StepError struct {
	Step, Job, Output string
	Err               error
}

func (e *StepError) Error() string {
	return fmt.Sprintf("%s of job '%s' failed: %v: %s", e.Step, e.Job, e.Err, strings.TrimSpace(e.Output))
}

// Watch is how long the director lets an instance's processes come up: it first looks after Min, then
// keeps looking until Max (the manifest's watch time).
type Watch struct {
	Min, Max time.Duration
}

// Deploy is what the director asks of an instance it creates or updates: drain, stop, apply the new jobs,
// pre-start, start, wait until every process runs (watch), post-start.
func (a *Agent) Deploy(jobs []Job, watch Watch) error {
	if err := a.Drain(Update); err != nil {
		return err
	}
	if err := a.Stop(); err != nil {
		return err
	}
	if err := a.Apply(jobs); err != nil {
		return err
	}
	if err := a.PreStart(); err != nil {
		return err
	}
	if err := a.Start(watch); err != nil {
		return err
	}
	return a.PostStart()
}

// DrainKind is why the agent drains: an update keeps the instance, a shutdown stops it (`bosh stop`, a recreate),
// a delete stops it for good and its persistent disk goes away.
type DrainKind int

const (
	Update DrainKind = iota
	Shutdown
	Delete
)

// jobState is what the agent tells a drain script of the instance now and after (BOSH_JOB_STATE and
// BOSH_JOB_NEXT_STATE): of the apply spec, only the persistent disk is simulated.
type jobState struct {
	PersistentDisk int `json:"persistent_disk"`
}

// Drain has monit stop watching the jobs, then runs each job's bin/drain, as before any stop, with the
// arguments and states the agent gives it for kind, and waits the seconds it asks for.
func (a *Agent) Drain(kind DrainKind) error {
	args := []string{"job_changed", "hash_changed"}
	next := jobState{PersistentDisk: a.PersistentDisk}
	if kind != Update {
		args = []string{"job_shutdown", "hash_unchanged"}
	}
	if kind == Delete {
		next.PersistentDisk = 0
	}
	now, _ := json.Marshal(jobState{PersistentDisk: a.PersistentDisk})
	after, _ := json.Marshal(next)
	env := []string{"BOSH_JOB_STATE=" + string(now), "BOSH_JOB_NEXT_STATE=" + string(after)}
	if err := a.unmonitor(); err != nil {
		return bosherr.WrapError(err, "Unmonitoring services")
	}
	return a.eachScript("drain", false, env, func(job, out string) error {
		seconds, err := strconv.Atoi(strings.TrimSpace(out))
		if err != nil || seconds < 0 {
			return bosherr.Errorf("drain of job '%s' printed '%s'; only a static wait (a whole number >= 0) is simulated", job, strings.TrimSpace(out))
		}
		time.Sleep(time.Duration(seconds) * time.Second)
		return nil
	}, args...)
}

// PreStart runs every job's bin/pre-start, all at once as the agent does.
func (a *Agent) PreStart() error { return a.eachScript("pre-start", true, nil, nil) }

// PostStart runs every job's bin/post-start, all at once as the agent does, once every process runs.
func (a *Agent) PostStart() error { return a.eachScript("post-start", true, nil, nil) }

// Stop is the agent's stop: monit stops every job's processes, each with its stop program and monit's
// timeout, and the agent waits until monit watches none of them.
func (a *Agent) Stop() error {
	if err := a.stopAndWait(); err != nil {
		return &StepError{Step: "stop", Job: strings.Join(a.Jobs(), ", "), Err: err}
	}
	return nil
}

// Start is the agent's start, then the director's watch: monit gets the jobs' monit files and reloads, monit
// starts every process in job order, and the director looks at the instance after watch.Min, then every
// second until it is running or watch.Max has passed.
func (a *Agent) Start(watch Watch) error {
	if err := a.configureJobs(); err != nil {
		return &StepError{Step: "start", Job: strings.Join(a.Jobs(), ", "), Err: err}
	}
	if err := a.startServices(); err != nil {
		return &StepError{Step: "start", Job: strings.Join(a.Jobs(), ", "), Err: err}
	}
	time.Sleep(watch.Min)
	return a.AwaitRunning(watch.Max - watch.Min)
}

// AwaitRunning waits until the agent reports the instance running, at most timeout, as the director waits
// after a start; after a boot, monit starts the jobs by itself.
func (a *Agent) AwaitRunning(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		state := a.Status()
		if state == "running" {
			return nil
		}
		if time.Now().After(deadline) {
			return &StepError{Step: "start", Job: strings.Join(a.NotRunning(), ", "),
				Err: bosherr.Errorf("%s, not running, after %s", state, timeout)}
		}
		time.Sleep(time.Second)
	}
}

// NotRunning names the processes that monit does not call running, with what monit says of each.
func (a *Agent) NotRunning() []string {
	services, err := a.services()
	if err != nil {
		return []string{err.Error()}
	}
	var down []string
	for _, s := range services {
		if s.State() != "running" {
			down = append(down, fmt.Sprintf("%s (%s: %s)", s.Name, s.State(), s.Message))
		}
	}
	return down
}

// PID is the process ID of the monit process name, from its pidfile as monit reads it (0 when it is not running).
func (a *Agent) PID(name string) int {
	for _, p := range a.processes() {
		if p.Name == name {
			return monit.PID(a.VM.Path(p.PIDFile))
		}
	}
	return 0
}

// Processes names every process that the jobs' monit files check, in job order.
func (a *Agent) Processes() []string {
	var names []string
	for _, p := range a.processes() {
		names = append(names, p.Name)
	}
	return names
}

func (a *Agent) processes() []monit.Process {
	a.mu.Lock()
	defer a.mu.Unlock()
	var procs []monit.Process
	for _, j := range a.jobs {
		procs = append(procs, j.procs...)
	}
	return procs
}

// eachScript runs bin/<script> of every job that has one (all at once when parallel), logging its output
// under /var/vcap/sys/log/<job>/ as the agent does; then, if set, check sees each script's output.
func (a *Agent) eachScript(script string, parallel bool, env []string, check func(job, out string) error, args ...string) error {
	a.mu.Lock()
	jobs := append([]installed(nil), a.jobs...)
	a.mu.Unlock()
	errs := make([]error, len(jobs))
	var wg sync.WaitGroup
	for i, job := range jobs {
		path := filepath.Join("/var/vcap/jobs", job.Name, "bin", script)
		if _, err := os.Stat(a.VM.Path(path)); err != nil {
			continue
		}
		run := func() {
			defer wg.Done()
			out, err := a.script(job.Name, script, env, append([]string{path}, args...))
			if err != nil {
				errs[i] = &StepError{Step: script, Job: job.Name, Output: out, Err: err}
			} else if check != nil {
				errs[i] = check(job.Name, out)
			}
		}
		wg.Add(1)
		if parallel {
			go run()
		} else {
			run()
		}
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func (a *Agent) script(job, script string, env, args []string) (string, error) {
	a.logf("%s of %s", script, job)
	logDir := a.VM.Path("/var/vcap/sys/log/" + job)
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return "", bosherr.WrapErrorf(err, "Creating %s", logDir)
	}
	var out bytes.Buffer
	cmd := a.VM.Command(args...)
	cmd.Env = append(cmd.Env, env...)
	for _, stream := range []struct {
		name string
		to   *io.Writer
	}{{"stdout", &cmd.Stdout}, {"stderr", &cmd.Stderr}} {
		// Appended to while the script runs, as the agent does; scripts may write there themselves too.
		log, err := os.OpenFile(filepath.Join(logDir, script+"."+stream.name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return "", bosherr.WrapErrorf(err, "Opening the %s log of %s", script, job)
		}
		defer log.Close()
		*stream.to = io.MultiWriter(log, &out)
	}
	err := cmd.Run()
	return out.String(), err
}

// StopProcess is `monit stop <name>`: monit runs the process's stop program and stops watching it; it returns
// once monit has.
func (a *Agent) StopProcess(name string) error {
	if err := a.client().Stop(name); err != nil {
		return err
	}
	deadline := time.Now().Add(stopTimeout)
	for {
		st, err := a.monitStatus()
		if err != nil {
			return err
		}
		for _, s := range st.Services {
			if s.Name == name && s.Monitor == 0 && s.Pending == 0 {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return &StepError{Step: "stop", Job: name, Err: bosherr.Errorf("still watched after %s", stopTimeout)}
		}
		time.Sleep(stopPoll)
	}
}

// StartProcess is `monit start <name>`: monit runs the process's start program and watches it again; it returns
// once the process's pidfile names a live process.
func (a *Agent) StartProcess(name string) error {
	for _, p := range a.processes() {
		if p.Name == name {
			if err := a.client().Start(name); err != nil {
				return err
			}
			return a.awaitPID(p)
		}
	}
	return bosherr.Errorf("No process '%s' on %s", name, a.VM.Name)
}

// programTimeout is how long monit lets a start or stop program run (its default).
const programTimeout = 30 * time.Second

// awaitPID waits until p's pidfile names a live process, as `monit start` reports it started.
func (a *Agent) awaitPID(p monit.Process) error {
	deadline := time.Now().Add(2 * programTimeout) // monit acts on its next cycle, then the program runs
	for monit.PID(a.VM.Path(p.PIDFile)) == 0 {
		if time.Now().After(deadline) {
			return &StepError{Step: "start", Job: p.Name, Err: bosherr.Errorf("no process after %s", 2*programTimeout)}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil
}
