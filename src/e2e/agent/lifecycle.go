package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"

	"github.com/flannel-dns/flannel-dns/src/e2e/monit"
)

// programTimeout is how long monit lets a start or stop program run (its default).
const programTimeout = 30 * time.Second

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

// Drain runs each job's bin/drain, as before any stop, with the arguments and states the agent gives it for
// kind, and waits the seconds it asks for.
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

// Stop runs every process's monit stop program and waits until the processes are gone.
func (a *Agent) Stop() error {
	for _, p := range a.processes() {
		if monit.PID(a.VM.Path(p.PIDFile)) == 0 {
			continue
		}
		if err := a.program("stop", p); err != nil {
			return err
		}
	}
	return nil
}

// Start runs every process's monit start program, in job order, and waits until all of them run: it looks
// after watch.Min, then until watch.Max. It is also what a VM's boot does (monit starts the jobs; no pre-start
// runs then).
func (a *Agent) Start(watch Watch) error {
	if err := a.startDown(); err != nil {
		return err
	}
	deadline := time.Now().Add(watch.Max)
	time.Sleep(watch.Min)
	nextCycle := time.Now().Add(monitCycle)
	for {
		down := a.NotRunning()
		if len(down) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return &StepError{Step: "start", Job: strings.Join(down, ", "), Err: bosherr.Errorf("not running after %s", watch.Max)}
		}
		if time.Now().After(nextCycle) { // monit starts what is not running on each of its cycles
			if err := a.startDown(); err != nil {
				return err
			}
			nextCycle = time.Now().Add(monitCycle)
		}
		time.Sleep(time.Second)
	}
}

// monitCycle is how often the stemcell's monit looks at its processes (its monitrc: set daemon 10).
const monitCycle = 10 * time.Second

// startDown runs the start program of every process that is not running.
func (a *Agent) startDown() error {
	for _, p := range a.processes() {
		if monit.PID(a.VM.Path(p.PIDFile)) != 0 {
			continue
		}
		if err := a.program("start", p); err != nil {
			return err
		}
	}
	return nil
}

// NotRunning names the processes that monit would not call running.
func (a *Agent) NotRunning() []string {
	var down []string
	for _, p := range a.processes() {
		if monit.PID(a.VM.Path(p.PIDFile)) == 0 {
			down = append(down, p.Name)
		}
	}
	return down
}

// PID is the process ID of the monit process name (0 when it is not running).
func (a *Agent) PID(name string) int {
	for _, p := range a.processes() {
		if p.Name == name {
			return monit.PID(a.VM.Path(p.PIDFile))
		}
	}
	return 0
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

// program runs p's start or stop program on the VM as monit does: as root, no shell. A stop program may take
// up to programTimeout; a start program is left to run, as monit spawns it and then only watches the pidfile
// (kubo's control scripts, for one, stay in the foreground with their process).
func (a *Agent) program(which string, p monit.Process) error {
	args := p.Stop
	if which == "start" {
		args = p.Start
	}
	a.logf("monit %s %s: %s", which, p.Name, strings.Join(args, " "))
	cmd := a.VM.Command(args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if which == "start" {
		if err := cmd.Start(); err != nil {
			return &StepError{Step: which, Job: p.Name, Err: err}
		}
		go func() {
			if err := cmd.Wait(); err != nil {
				a.logf("monit start %s: %v: %s", p.Name, err, strings.TrimSpace(out.String()))
			}
		}()
		return nil
	}
	if err := runWithin(cmd, programTimeout); err != nil {
		return &StepError{Step: which, Job: p.Name, Output: out.String(), Err: err}
	}
	return nil
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

// runWithin runs cmd and kills its process group when it takes longer than timeout.
func runWithin(cmd *exec.Cmd, timeout time.Duration) error {
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(timeout):
		_ = killGroup(cmd.Process.Pid)
		<-done
		return bosherr.Errorf("timed out after %s", timeout)
	}
}

// StopProcess and StartProcess are `monit stop <name>` and `monit start <name>`: the process's own program,
// nothing else of the job.
func (a *Agent) StopProcess(name string) error { return a.processProgram("stop", name) }

// StartProcess: see StopProcess.
func (a *Agent) StartProcess(name string) error { return a.processProgram("start", name) }

func (a *Agent) processProgram(which, name string) error {
	for _, p := range a.processes() {
		if p.Name != name {
			continue
		}
		if err := a.program(which, p); err != nil || which != "start" {
			return err
		}
		return a.awaitPID(p)
	}
	return bosherr.Errorf("No process '%s' on %s", name, a.VM.Name)
}

// awaitPID waits until p's pidfile names a live process, as `monit start` reports it started.
func (a *Agent) awaitPID(p monit.Process) error {
	deadline := time.Now().Add(programTimeout)
	for monit.PID(a.VM.Path(p.PIDFile)) == 0 {
		if time.Now().After(deadline) {
			return &StepError{Step: "start", Job: p.Name, Err: bosherr.Errorf("no process after %s", programTimeout)}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil
}
