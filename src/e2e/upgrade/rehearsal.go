// Package upgrade rehearses what every later release does to a running cluster: it deploys the newest final
// release with the ops-files as they are, then the next release (a dev release of this checkout whose
// flannel-launcher changed, as a later release's would), which the director rolls as the manifest's `update:`
// says: masters, then workers one at a time, canary first, a worker's pods evicted before its update and made
// again after it. Each step is measured: probe loss between the pods of the workers not being updated, how
// long the updated worker's new pods take to reach the others, every node's subnet and launcher version.
package upgrade

import (
	"net/netip"
	"time"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"

	"github.com/flannel-dns/flannel-dns/src/e2e/cluster"
	"github.com/flannel-dns/flannel-dns/src/e2e/pods"
)

// Plan is the rehearsal's cluster.
type Plan struct {
	Masters, Workers int
	// Settle is how long the probes run on after a step, inside its window.
	Settle time.Duration
}

// Count is probe datagrams sent and lost.
type Count struct{ Sent, Lost int }

// Step is what one step did and left.
type Step struct {
	Name string
	Took time.Duration
	// Others is the probe among the pods of the workers the step did not update.
	Others Count
	// Reach is how long after its update ended the updated worker's new pods reached every other pod: the end
	// of the last window of pods.BucketWidth in which a datagram between them was lost, or of the first in which
	// one was echoed. Reached is false when none was echoed before the step ended. Workers only.
	Reach   time.Duration
	Reached bool
	// Subnets and Versions are each node's FLANNEL_SUBNET and launcher version after the step, by instance name.
	Subnets, Versions map[string]string
}

// Result is the whole rehearsal.
type Result struct {
	Start Step   // the final release's deployment
	Roll  []Step // one per instance the upgrade updated, in the director's order
}

type rehearsal struct {
	c        *cluster.Cluster
	plan     Plan
	progress func(Step)
	result   Result
	err      error // the first measurement error during the roll
}

// Run deploys the final release, then upgrades to the next; progress is told about each step as it ends. The
// result holds every step that ended, also on an error.
func Run(c *cluster.Cluster, plan Plan, progress func(Step)) (Result, error) {
	r := &rehearsal{c: c, plan: plan, progress: progress}
	start := time.Now()
	if _, err := c.Deploy(plan.Masters, plan.Workers); err != nil {
		return r.result, bosherr.WrapError(err, "Deploying the final release")
	}
	r.result.Start = r.record(Step{Name: "deploy the final release"}, start)
	r.tell(r.result.Start)
	c.Rolling = r.update
	defer func() { c.Rolling = nil }()
	if _, err := c.Upgrade(); err != nil {
		return r.result, bosherr.WrapError(err, "Upgrading to the next release")
	}
	return r.result, r.err
}

// update is the roll's hook around each instance's update: evict a worker's pods, update, make them again,
// let the probes run, and record the step.
func (r *rehearsal) update(name string, update func() error) error {
	start := time.Now()
	step := Step{Name: "update " + name}
	w := r.c.WorkerNamed(name)
	if w != nil {
		if err := r.c.EvictPods(w); err != nil {
			return err
		}
	}
	if err := update(); err != nil {
		return err
	}
	updated := time.Now()
	if w != nil {
		if err := r.c.ReturnPods(w); err != nil {
			return err
		}
	}
	time.Sleep(r.plan.Settle)
	end := time.Now()
	time.Sleep(time.Second) // the last echoes come back
	owners := r.c.PodOwners()
	step.Others = r.count(start, end, func(a, b netip.Addr) bool {
		return owners(a) != "" && owners(b) != "" && owners(a) != name && owners(b) != name
	})
	if w != nil {
		step.Reach, step.Reached = r.reach(name, owners, updated, end)
	}
	step = r.record(step, start)
	r.result.Roll = append(r.result.Roll, step)
	r.tell(step)
	return nil
}

// reach is Step.Reach for the worker called name, its pods' traffic with the others in [from, to).
func (r *rehearsal) reach(name string, owners func(netip.Addr) string, from, to time.Time) (time.Duration, bool) {
	mine := func(a, b netip.Addr) bool { return (owners(a) == name) != (owners(b) == name) }
	var lastLoss, firstEcho time.Time
	for t := from; t.Before(to); t = t.Add(pods.BucketWidth) {
		c := r.count(t, t.Add(pods.BucketWidth), mine)
		if c.Lost > 0 {
			lastLoss = t.Add(pods.BucketWidth)
		}
		if c.Sent > c.Lost && firstEcho.IsZero() {
			firstEcho = t.Add(pods.BucketWidth)
		}
	}
	switch {
	case firstEcho.IsZero():
		return 0, false
	case lastLoss.After(firstEcho):
		return lastLoss.Sub(from), true
	}
	return firstEcho.Sub(from), true
}

func (r *rehearsal) count(from, to time.Time, between func(a, b netip.Addr) bool) Count {
	sent, lost, _ := r.c.Prober.Between(from, to, between)
	return Count{Sent: sent, Lost: lost}
}

// record fills in the step's time, subnets and launcher versions as they are now.
func (r *rehearsal) record(step Step, start time.Time) Step {
	step.Took = time.Since(start)
	step.Subnets = r.c.NodeSubnets()
	step.Versions = map[string]string{}
	for name := range step.Subnets {
		step.Versions[name] = r.c.LauncherVersion(name)
	}
	return step
}

func (r *rehearsal) tell(s Step) {
	if r.progress != nil {
		r.progress(s)
	}
}
