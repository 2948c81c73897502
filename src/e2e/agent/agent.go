// Package agent plays the BOSH agent, and monit under it, on one simulated VM: it lays out the jobs and
// packages that the director sends as the agent does, runs the jobs' lifecycle in BOSH's order (drain, stop,
// pre-start, start, wait for running, post-start), starts and stops processes with exactly the programs
// that their monit files name, keeps /var/vcap/instance/health.json true to them, and writes the DNS records
// that the director pushes (sync_dns).
package agent

import (
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
	// RenderedOnly: the simulated VM does not run the job (kubo's kubelet, say). Of such a job the agent lays
	// out only the packages it has, where the job finds them; the job has no files and no part in the lifecycle.
	RenderedOnly bool
}

// Agent is the agent and monit of one VM.
type Agent struct {
	VM *vm.VM
	// Packages maps a package name to its compiled directory on the host.
	Packages map[string]string
	// PersistentDisk is the size in MiB of the instance's persistent disk (0: none), as drain scripts are told.
	PersistentDisk int
	Logf           func(format string, args ...any)

	mu     sync.Mutex
	jobs   []installed
	health chan struct{} // closed to stop keeping health.json
}

type installed struct {
	Job
	procs []monit.Process
}

// New is the agent of v; it keeps health.json up to date until Halt.
func New(v *vm.VM, packages map[string]string, logf func(string, ...any)) *Agent {
	a := &Agent{VM: v, Packages: packages, Logf: logf, health: make(chan struct{})}
	go a.keepHealth(time.Second)
	return a
}

// Halt stops keeping health.json (the VM is going away).
func (a *Agent) Halt() {
	a.mu.Lock()
	defer a.mu.Unlock()
	select {
	case <-a.health:
	default:
		close(a.health)
	}
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
