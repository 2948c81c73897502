package agent

// The job supervisor: monit on the VM, driven as bosh-agent's monit job supervisor drives it.

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"

	"github.com/flannel-dns/flannel-dns/src/e2e/monit"
)

// Where a stemcell has monit, its control file and what the agent gives it (as on the VM).
const (
	monitBin    = "/var/vcap/bosh/bin/monit"
	monitrc     = "/var/vcap/bosh/etc/monitrc"
	monitDir    = "/var/vcap/monit"
	monitJobDir = "/var/vcap/monit/job"
	monitUser   = "/var/vcap/monit/monit.user"
	stoppedFile = "/var/vcap/monit/stopped" // the agent's mark of stopped jobs
	// monitCredentials are what bosh-agent writes into monit.user at every boot.
	monitCredentials = "vcap:random-password"
	vcapGroup        = "vcap"
)

// The agent's patience: status and start requests are retried 20 times a second apart; stop waits 5 minutes,
// polling every 500 ms; a reload looks for a new incarnation 10 times a second apart, and tries 3 times.
const (
	requestAttempts = 20
	stopTimeout     = 5 * time.Minute
	stopPoll        = 500 * time.Millisecond
	reloadTries     = 3
	reloadChecks    = 10
)

// layOutStemcell puts the stemcell's monit, its monitrc, and the include file monit needs, on the VM's disk.
func (a *Agent) layOutStemcell(from string) error {
	for _, f := range []struct {
		src, dst string
		mode     os.FileMode
	}{{"bin/monit", monitBin, 0o755}, {"etc/monitrc", monitrc, 0o700}} {
		data, err := os.ReadFile(filepath.Join(from, f.src))
		if err != nil {
			return bosherr.WrapError(err, "Reading the stemcell's monit (scripts/build-monit)")
		}
		if err := os.MkdirAll(filepath.Dir(a.VM.Path(f.dst)), 0o755); err != nil {
			return bosherr.WrapErrorf(err, "Laying out %s on %s", f.dst, a.VM.Name)
		}
		if err := os.WriteFile(a.VM.Path(f.dst), data, f.mode); err != nil {
			return bosherr.WrapErrorf(err, "Laying out %s on %s", f.dst, a.VM.Name)
		}
	}
	// monit refuses to start when an include pattern matches nothing
	return os.WriteFile(a.VM.Path(monitDir+"/empty.monitrc"), nil, 0o644)
}

// Boot is what the VM's boot does before any job runs: the agent writes monit's credentials and starts monit
// (runit's service), which starts every job it monitored before (its state file, in root's home, outlives a
// reboot), and sends its first heartbeat.
func (a *Agent) Boot() error {
	if err := os.WriteFile(a.VM.Path(monitUser), []byte(monitCredentials), 0o600); err != nil {
		return bosherr.WrapErrorf(err, "Writing monit's credentials on %s", a.VM.Name)
	}
	client, err := monit.NewClient(a.VM.Namespace, a.VM.Path(monitUser))
	if err != nil {
		return err
	}
	a.mu.Lock()
	a.monit, a.off = client, false
	a.mu.Unlock()
	if err := a.startMonit(); err != nil {
		return err
	}
	if _, err := a.monitStatus(); err != nil {
		return bosherr.WrapErrorf(err, "monit on %s does not answer", a.VM.Name)
	}
	a.recordHealth()
	return nil
}

// startMonit runs monit in the foreground as the stemcell's runit service does (`nice -n -10 monit -I -c
// monitrc`), in the VM's namespaces and cgroup, its output in /var/vcap/monit/svlog as runit's log service
// keeps it.
func (a *Agent) startMonit() error {
	logDir := a.VM.Path(monitDir + "/svlog")
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return bosherr.WrapErrorf(err, "Creating %s", logDir)
	}
	log, err := os.OpenFile(filepath.Join(logDir, "current"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return bosherr.WrapError(err, "Opening monit's output")
	}
	defer log.Close()
	cmd := a.VM.Command("nice", "-n", "-10", monitBin, "-I", "-c", monitrc)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return bosherr.WrapErrorf(err, "Starting monit on %s", a.VM.Name)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	a.mu.Lock()
	a.daemon, a.exited = cmd, exited
	a.mu.Unlock()
	return nil
}

// killMonit kills the monit daemon with SIGKILL (`sv kill monit`), leaving the processes it started, and
// waits until it is gone.
func (a *Agent) killMonit() {
	a.mu.Lock()
	cmd, exited := a.daemon, a.exited
	a.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = syscall.Kill(cmd.Process.Pid, syscall.SIGKILL)
	<-exited
}

// reload makes monit read its control file and the job files again, as the agent does: kill it, start it,
// and wait until its incarnation (its start time, in seconds) changes.
func (a *Agent) reload() error {
	before, err := a.monitStatus()
	if err != nil {
		return bosherr.WrapError(err, "Getting monit incarnation")
	}
	for try := 0; try < reloadTries; try++ {
		a.killMonit()
		if err := a.startMonit(); err != nil {
			return err
		}
		for check := 0; check < reloadChecks; check++ {
			if st, err := a.client().Status(); err == nil && st.Incarnation != before.Incarnation {
				return nil
			}
			time.Sleep(time.Second)
		}
	}
	return bosherr.Errorf("Failed to reload monit on %s: incarnation still %s", a.VM.Name, before.Incarnation)
}

func (a *Agent) client() *monit.Client {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.monit
}

// monitStatus is monit's status, asked up to requestAttempts times a second apart (monit may be starting).
func (a *Agent) monitStatus() (monit.Status, error) {
	var err error
	for attempt := 0; attempt < requestAttempts; attempt++ {
		var st monit.Status
		if st, err = a.client().Status(); err == nil {
			return st, nil
		}
		time.Sleep(time.Second)
	}
	return monit.Status{}, err
}

// services are the vcap group's services, as monit lists them.
func (a *Agent) services() ([]monit.Service, error) {
	st, err := a.monitStatus()
	if err != nil {
		return nil, err
	}
	return st.Group(vcapGroup), nil
}

// eachService asks monit to act on every service of the vcap group, in monit's order.
func (a *Agent) eachService(act func(*monit.Client, string) error) error {
	services, err := a.services()
	if err != nil {
		return err
	}
	for _, s := range services {
		if err := act(a.client(), s.Name); err != nil {
			return err
		}
	}
	return nil
}

// startServices is the agent's start: monit starts every vcap service, and the stopped mark goes.
func (a *Agent) startServices() error {
	if err := a.eachService((*monit.Client).Start); err != nil {
		return err
	}
	if err := os.Remove(a.VM.Path(stoppedFile)); err != nil && !os.IsNotExist(err) {
		return bosherr.WrapError(err, "Removing the stopped mark")
	}
	a.recordHealth()
	return nil
}

// unmonitor is what the agent does before a drain: monit stops watching every vcap service.
func (a *Agent) unmonitor() error {
	if err := a.eachService((*monit.Client).Unmonitor); err != nil {
		return err
	}
	a.recordHealth()
	return nil
}

// stopAndWait is the agent's stop: once no service has an action pending, `monit stop -g vcap` on the VM,
// the stopped mark, then a wait until monit watches none of them any more (each stop program has its monit
// timeout), at most stopTimeout.
func (a *Agent) stopAndWait() error {
	deadline := time.Now().Add(stopTimeout)
	pending := func(s monit.Service) bool { return s.Pending > 0 }
	if err := a.awaitServices(deadline, "to no longer be pending", false, pending); err != nil {
		return err
	}
	if out, err := a.VM.Run(monitBin, "stop", "-g", vcapGroup); err != nil {
		return bosherr.WrapErrorf(err, "Stop all services: %s", strings.TrimSpace(out))
	}
	if err := os.WriteFile(a.VM.Path(stoppedFile), nil, 0o644); err != nil {
		return bosherr.WrapError(err, "Creating the stopped mark")
	}
	return a.awaitServices(deadline, "to stop", true, func(s monit.Service) bool { return s.Monitor > 0 || s.Pending > 0 })
}

// awaitServices polls monit until no vcap service is busy; with errors set, a service that errored ends the wait.
func (a *Agent) awaitServices(deadline time.Time, what string, errors bool, busy func(monit.Service) bool) error {
	for {
		services, err := a.services()
		if err != nil {
			return err
		}
		var waiting, errored []string
		for _, s := range services {
			if errors && s.Status > 0 && s.Message != "" {
				errored = append(errored, s.Name+": "+s.Message)
			}
			if busy(s) {
				waiting = append(waiting, s.Name)
			}
		}
		if len(errored) > 0 {
			return bosherr.Errorf("Stopping services '%s' errored", strings.Join(errored, "', '"))
		}
		if len(waiting) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return bosherr.Errorf("Timed out waiting for services '%s' %s after %s", strings.Join(waiting, ", "), what, stopTimeout)
		}
		time.Sleep(stopPoll)
	}
}

// Status is the instance's state as the agent reports it to the director and in health.json: stopped (after
// the agent's stop), starting (monit initialises a service), failing (a service is not monitored or not
// running), running, or unknown when monit does not answer.
func (a *Agent) Status() string {
	st, err := a.client().Status()
	if err != nil {
		return "unknown"
	}
	if _, err := os.Stat(a.VM.Path(stoppedFile)); err == nil {
		return "stopped"
	}
	state := "running"
	for _, s := range st.Group(vcapGroup) {
		switch s.State() {
		case "starting":
			return "starting"
		case "running":
		default:
			state = "failing"
		}
	}
	return state
}
