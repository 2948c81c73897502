package cluster

// What BOSH does to a worker besides a deploy (reboot, recreate), a deploy with an operator's ops-file, and
// what bosh-dns answers on every VM.

import (
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/flannel-dns/flannel-dns/src/e2e/agent"
	"github.com/flannel-dns/flannel-dns/src/e2e/boshdns"
	"github.com/flannel-dns/flannel-dns/src/e2e/worker"
)

// RebootWorker power-cycles w: every process killed, its volatile state gone (vm.PowerOff: its pods' sandboxes
// and veths, cni0 too), then the boot, where the agent starts monit, which runs each job's start program and
// nothing else (no pre-start). Once every process runs, kubelet's part: each dead pod is deleted through CNI
// and made again. atBoot, if given, runs after the power off and before monit starts the jobs: what a process
// on the VM could do early in the boot.
func (c *Cluster) RebootWorker(w *worker.Worker, atBoot ...func() error) error {
	c.Logf("%s: power off", w.Name)
	if err := w.Agent.PowerOff(); err != nil {
		return err
	}
	for _, f := range atBoot {
		if err := f(); err != nil {
			return err
		}
	}
	c.Logf("%s: boot (monit starts the jobs)", w.Name)
	if err := w.Agent.Boot(); err != nil {
		return err
	}
	// No director watches a boot: it is looked at at once, until the longest watch time.
	if err := w.Agent.AwaitRunning(c.update.UpdateWatch.Max); err != nil {
		return err
	}
	return c.RestartPods(w)
}

// StopWorker is `bosh stop` on w: drain, then the monit stop programs. The VM stays up, and with it /run, cni0
// and the pods (their sandboxes and veths).
func (c *Cluster) StopWorker(w *worker.Worker) error {
	c.Logf("stopping %s", w.Name)
	if err := w.Agent.Drain(agent.Shutdown); err != nil {
		return err
	}
	return w.Agent.Stop()
}

// StartWorker is `bosh start` on a stopped w: pre-start, the monit start programs, post-start.
func (c *Cluster) StartWorker(w *worker.Worker) error {
	c.Logf("starting %s", w.Name)
	if err := w.Agent.PreStart(); err != nil {
		return err
	}
	if err := w.Agent.Start(agent.Watch(c.update.UpdateWatch)); err != nil {
		return err
	}
	return w.Agent.PostStart()
}

// RecreateWorker does what `bosh recreate` does to w: drain and stop its jobs, delete its VM, create a new one
// with an empty disk for the same instance (same ID and address), then deploy it with its jobs. Its pods die
// with the old VM; new ones are made on the new VM. It returns the new worker.
// beforeDeploy, if given, runs on the new VM before the agent puts any job there.
func (c *Cluster) RecreateWorker(w *worker.Worker, beforeDeploy ...func(*worker.Worker) error) (*worker.Worker, error) {
	name := instanceName("worker", w.Index)
	c.forgetPods(w)
	next, err := c.ReplaceWorkerVM(w)
	if err != nil {
		return next, err
	}
	for _, f := range beforeDeploy {
		if err := f(next); err != nil {
			return next, err
		}
	}
	rendered := c.applied[c.ids[name]]
	if err := next.Agent.Deploy(rendered.Jobs, agent.Watch(c.update.CanaryWatch)); err != nil {
		return next, &RollError{Instance: name, Canary: true, Err: err}
	}
	return next, c.addPods(next)
}

// ReplaceWorkerVM drains and stops w's jobs, deletes its VM and creates a new one with an empty disk for the
// same instance (same ID and address), nothing on it yet (a recreate before the deploy reaches the jobs); the
// director's records go out again.
func (c *Cluster) ReplaceWorkerVM(w *worker.Worker) (*worker.Worker, error) {
	name := instanceName("worker", w.Index)
	c.Logf("recreating %s", name)
	if err := c.destroyVM(name, agent.Shutdown); err != nil {
		return nil, err
	}
	v, a, err := c.bootVM("worker", w.Index, w.Address)
	if err != nil {
		return nil, err
	}
	next := &worker.Worker{VM: v, Agent: a, Index: w.Index}
	c.workers[w.Index] = next
	return next, c.syncDNS(c.instances())
}

// DeployWithOps deploys again with the manifest built with extra ops-files applied after the usual ones (none:
// the usual manifest), as an operator's next `bosh deploy -o ...` does.
func (c *Cluster) DeployWithOps(extra ...string) (Changes, error) {
	c.extraOps = extra
	if err := c.loadDeployments(); err != nil {
		return Changes{}, err
	}
	c.Logf("deploying with ops-files %v", extra)
	return c.deploy()
}

// DNSProblems asks bosh-dns on every VM what the aliases promise and lists every answer that breaks it: the
// etcd alias answers every master, master-N.etcd the one master of index N, and a name for an index no
// master has answers no address (NXDOMAIN; bosh-dns 1.8.0 and 1.11.0 answer NOERROR without an answer).
func (c *Cluster) DNSProblems() []string {
	masters := map[int]string{}
	var all []string
	for idx, m := range c.masters {
		masters[idx] = m.Address.String()
		all = append(all, m.Address.String())
	}
	sort.Strings(all)
	want := map[string]boshdns.Answer{Alias: {Rcode: "NOERROR", Addresses: all}}
	for idx := 0; idx <= slices.Max(c.Masters())+1; idx++ {
		name := fmt.Sprintf("master-%d.etcd.%s", idx, Domain)
		if addr, ok := masters[idx]; ok {
			want[name] = boshdns.Answer{Rcode: "NOERROR", Addresses: []string{addr}}
		} else {
			want[name] = boshdns.Answer{Rcode: "NXDOMAIN"}
		}
	}
	var problems []string
	for _, inst := range c.instances() {
		a := c.agents[inst.Name()]
		for name, expected := range want {
			got, err := boshdns.Query(a.VM.Namespace, boshdns.Resolver, name)
			noAddress := expected.Rcode == "NXDOMAIN" && got.Rcode == "NOERROR" && len(got.Addresses) == 0
			if err != nil || (got.Rcode != expected.Rcode && !noAddress) || !slices.Equal(got.Addresses, expected.Addresses) {
				problems = append(problems, fmt.Sprintf("%s: %s answered %v %v (%v), expected %s %v", inst.Name(), name,
					got.Rcode, got.Addresses, err, expected.Rcode, expected.Addresses))
			}
		}
	}
	sort.Strings(problems)
	return problems
}

// AwaitDNS waits until DNSProblems has none, at most timeout (bosh-dns checks an instance's health every
// 20 s, and a new master may have been checked while it was still starting); it returns what remains.
func (c *Cluster) AwaitDNS(timeout time.Duration) []string {
	deadline := time.Now().Add(timeout)
	for {
		problems := c.DNSProblems()
		if len(problems) == 0 || time.Now().After(deadline) {
			return problems
		}
		time.Sleep(time.Second)
	}
}

// AliasAnswer is what bosh-dns on w answers for the etcd alias.
func AliasAnswer(w *worker.Worker) (boshdns.Answer, error) {
	return boshdns.Query(w.Namespace, boshdns.Resolver, Alias)
}
