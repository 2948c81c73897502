// Package scenario runs the master-scaling scenario on the simulated cluster, records what every step
// did to the workers, and checks the pass criteria.
package scenario

import (
	"fmt"
	"strings"
	"time"

	"github.com/flannel-dns/flannel-dns/src/e2e/cluster"
)

// WorkerState is what a step leaves on one worker.
type WorkerState struct {
	Name        string
	FlanneldPID int
	Subnet      string // FLANNEL_SUBNET from subnet.env
	LeaseInEtcd bool
}

// Step is the record of one step.
type Step struct {
	Name       string
	MasterStep bool
	Changes    cluster.Changes
	Workers    []WorkerState
	Sent, Lost int // pod probe datagrams during the step
	// DNSProblems are answers of bosh-dns, on any VM, that break what the aliases promise after the step.
	DNSProblems []string
	DNSSettled  time.Duration // how long after the step's actions every answer was right
	Took        time.Duration
	Start, End  time.Time // the step's window: its actions, then the settle time
}

// dnsTimeout bounds the wait for bosh-dns's answers after a step: a new master that bosh-dns checked while it
// was still starting is left out of the alias until its next check, every remote_health_interval (20 s).
const dnsTimeout = time.Minute

type action struct {
	name       string
	masterStep bool
	run        func(*cluster.Cluster) (cluster.Changes, error)
}

func scaleTo(n int) func(*cluster.Cluster) (cluster.Changes, error) {
	return func(c *cluster.Cluster) (cluster.Changes, error) { return c.ScaleMasters(n) }
}

// Plan is a list of steps after the first deploy of 3 masters and 2 workers.
type Plan []action

var (
	scaleDown = action{"scale masters 3->2", true, scaleTo(2)}
	scaleUp   = action{"scale masters 2->3", true, scaleTo(3)}
	addWorker = action{"add worker/2", false, (*cluster.Cluster).AddWorker}
)

// Full is the scenario the end-to-end suite runs: every way the masters change, then a worker added.
var Full = Plan{
	scaleDown,
	scaleUp,
	{"scale masters 3->5", true, scaleTo(5)},
	{"scale masters 5->3", true, scaleTo(3)},
	{"replace master/1", true, func(c *cluster.Cluster) (cluster.Changes, error) { return c.ReplaceMaster(1) }},
	addWorker,
}

// Short is the demo's: one master removed and one added, each rolled over the masters as the director rolls
// them, in about three minutes.
var Short = Plan{scaleDown, scaleUp}

// Run deploys, then runs the plan's steps; settle is how long the probe keeps going after a step's actions,
// inside the step's window. progress is told about each step as it ends.
func Run(c *cluster.Cluster, plan Plan, settle time.Duration, progress func(Step)) ([]Step, error) {
	deploy := action{"deploy (3 masters, 2 workers)", false, func(c *cluster.Cluster) (cluster.Changes, error) { return c.Deploy(3, 2) }}
	var steps []Step
	for _, a := range append(Plan{deploy}, plan...) {
		step, err := runStep(c, a, settle)
		steps = append(steps, step)
		if progress != nil {
			progress(step)
		}
		if err != nil {
			return steps, fmt.Errorf("step %q: %w", a.name, err)
		}
	}
	return steps, nil
}

func runStep(c *cluster.Cluster, a action, settle time.Duration) (Step, error) {
	c.Logf("step: %s", a.name)
	start := time.Now()
	changes, err := a.run(c)
	step := Step{Name: a.name, MasterStep: a.masterStep, Changes: changes, Start: start}
	if err != nil {
		step.End = time.Now()
		return step, err
	}
	settled := time.Now()
	step.DNSProblems = c.AwaitDNS(dnsTimeout)
	step.DNSSettled = time.Since(settled)
	time.Sleep(settle)
	end := time.Now()
	step.Took, step.End = end.Sub(start), end
	time.Sleep(time.Second) // the last echoes of the window come back
	step.Sent, step.Lost = c.Prober.Loss(start, end)
	step.Workers, err = workerStates(c)
	return step, err
}

func workerStates(c *cluster.Cluster) ([]WorkerState, error) {
	leases, err := c.Leases()
	if err != nil {
		return nil, err
	}
	var states []WorkerState
	for _, w := range c.Workers() {
		env, err := w.SubnetEnv(cluster.SubnetFile)
		if err != nil {
			return nil, err
		}
		subnet := env["FLANNEL_SUBNET"]
		states = append(states, WorkerState{Name: fmt.Sprintf("worker/%d", w.Index),
			FlanneldPID: w.FlanneldPID(), Subnet: subnet,
			LeaseInEtcd: strings.Contains(leases, "/subnets/"+leaseKey(subnet)+"\n")})
	}
	return states, nil
}

// leaseKey turns FLANNEL_SUBNET (198.18.7.1/24) into flannel's lease key (198.18.7.0-24).
func leaseKey(subnet string) string {
	addr, bits, _ := strings.Cut(subnet, "/")
	parts := strings.Split(addr, ".")
	if len(parts) == 4 {
		parts[3] = "0"
	}
	return strings.Join(parts, ".") + "-" + bits
}
