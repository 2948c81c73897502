// Package agent plays the BOSH agent on one simulated VM, beside the stemcell's monit that it runs there: it
// lays out the jobs and packages that the director sends as the agent does, runs the jobs' lifecycle in BOSH's
// order (drain, stop, pre-start, start, wait for running, post-start) by driving monit as bosh-agent's job
// supervisor does, writes /var/vcap/instance/health.json from monit's view on the agent's heartbeat, and
// writes the DNS records that the director pushes (sync_dns).
package agent

import (
	"os/exec"
	"sync"
	"time"

	"github.com/flannel-dns/flannel-dns/src/e2e/monit"
	"github.com/flannel-dns/flannel-dns/src/e2e/vm"
)

// Job is one job as the director sends it for an instance: its rendered files (the monit file among them,
// under jobrender.MonitPath) and the packages its spec names.
type Job struct {
	Name     string
	Files    map[string][]byte
	Packages []string
	// PackageDirs are the compiled packages of the job's release version, by name; a package not here is the
	// agent's (Agent.Packages).
	PackageDirs map[string]string
	// RenderedOnly: the simulated VM does not run the job (kubo's kubelet, say). Of such a job the agent lays
	// out only the packages it has, where the job finds them; the job has no files and no part in the lifecycle.
	RenderedOnly bool
}

// HeartbeatInterval is how often bosh-agent sends its heartbeat, and writes health.json with it.
const HeartbeatInterval = 30 * time.Second

// Agent is the agent of one VM, and the monit daemon it runs there.
type Agent struct {
	VM *vm.VM
	// Packages maps a package name to its compiled directory on the host.
	Packages map[string]string
	// PersistentDisk is the size in MiB of the instance's persistent disk (0: none), as drain scripts are told.
	PersistentDisk int
	Logf           func(format string, args ...any)

	mu     sync.Mutex
	jobs   []installed
	monit  *monit.Client
	daemon *exec.Cmd     // the monit daemon, while it runs
	exited chan struct{} // closed when daemon has exited
	health []Health
	off    bool          // powered off: no agent runs to send heartbeats
	halt   chan struct{} // closed to stop the heartbeat
}

type installed struct {
	Job
	procs []monit.Process
}

// New is the agent of v, on a VM whose stemcell has the monit that monitDir holds (scripts/build-monit:
// bin/monit, etc/monitrc). It boots the VM's monit, and sends heartbeats until Halt.
func New(v *vm.VM, packages map[string]string, monitDir string, logf func(string, ...any)) (*Agent, error) {
	a := &Agent{VM: v, Packages: packages, Logf: logf, halt: make(chan struct{})}
	if err := a.layOutStemcell(monitDir); err != nil {
		return nil, err
	}
	if err := a.Boot(); err != nil {
		return nil, err
	}
	go a.heartbeat(HeartbeatInterval)
	return a, nil
}

// Halt stops the heartbeat (the VM is going away); its processes go with the VM.
func (a *Agent) Halt() {
	a.mu.Lock()
	defer a.mu.Unlock()
	select {
	case <-a.halt:
	default:
		close(a.halt)
	}
}

// PowerOff cuts the VM's power (vm.VM.PowerOff: monit and every process killed, volatile state gone); the
// agent sends no heartbeat until Boot.
func (a *Agent) PowerOff() error {
	a.mu.Lock()
	a.off = true
	a.mu.Unlock()
	return a.VM.PowerOff()
}

// Jobs names the installed jobs, in order.
func (a *Agent) Jobs() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var names []string
	for _, j := range a.jobs {
		names = append(names, j.Name)
	}
	return names
}

func (a *Agent) logf(format string, args ...any) {
	if a.Logf != nil {
		a.Logf(a.VM.Name+": "+format, args...)
	}
}
