// Package adoption rehearses adopting flannel-dns on a running kubo cluster. It deploys the cluster as CFCR
// runs it (kubo's flanneld, flannel v0.12.0 on etcd 3.4's v2 API), then the manifest with flannel-dns's
// ops-files as the director rolls it: masters, then workers one at a time, canary first, a worker's pods evicted
// before its update and back after it. Every step of the roll is measured: probe loss between the pods of the
// workers not being updated, by pair (both on kubo's flanneld, one on each, both on flannel-dns), every node's
// subnet, the lease holders in the v2 and the v3 store and any subnet claimed by two nodes; then how long the
// pod network takes to converge after the last worker, and a scale of the masters after adoption.
package adoption

import (
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"

	"github.com/flannel-dns/flannel-dns/src/e2e/cluster"
)

// Plan is the rehearsal's cluster and roll.
type Plan struct {
	Masters, Workers int
	// Recreate is the instance the roll recreates (new VM, empty disk) instead of updating, as `bosh deploy
	// --recreate` or the resurrector would mid-roll; "" for none.
	Recreate string
	// Settle is how long the probes run on after a step, inside its window.
	Settle time.Duration
}

// Kind is which flanneld a node runs.
type Kind string

const (
	Kubo       Kind = "kubo"
	FlannelDNS Kind = "flannel-dns"
)

// Pair is the kinds of two nodes, in a fixed order.
type Pair string

const (
	KuboKubo             Pair = "kubo-kubo"
	KuboFlannelDNS       Pair = "kubo-flannel-dns"
	FlannelDNSFlannelDNS Pair = "flannel-dns-flannel-dns"
)

// Pairs are the pair kinds in the order tables show them.
var Pairs = []Pair{KuboKubo, KuboFlannelDNS, FlannelDNSFlannelDNS}

// Count is probe datagrams sent and lost.
type Count struct{ Sent, Lost int }

// Step is what one step did and left.
type Step struct {
	Name     string
	Instance string // the instance the step updated, "" for a deploy
	Took     time.Duration
	Loss     map[Pair]Count    // among the pods of workers the step did not update
	Subnets  map[string]string // each node's FLANNEL_SUBNET after the step, by instance name
	V2, V3   map[string]string // lease holders after the step: node address by subnet key
	Claims   []string          // subnets that two nodes claim (subnet files, v2 and v3 leases together)
	Updated  []string          // instances the step's deploy updated or created
}

// Result is the whole rehearsal.
type Result struct {
	Start Step   // the kubo deployment
	Roll  []Step // one per instance of the adoption deploy
	// Converged is how long after the last worker's update the last probe datagram among all pods was lost
	// (0 when none was).
	Converged time.Duration
	Scale     Step // masters scaled up by one after adoption
}

// rehearsal is the state of one run.
type rehearsal struct {
	c        *cluster.Cluster
	plan     Plan
	kinds    map[string]Kind // by instance name
	progress func(Step)
	result   Result
	err      error     // the first measurement error during the roll
	lastDone time.Time // when the last worker's update ended
}

// Run deploys the kubo cluster, adopts flannel-dns, then scales the masters up by one; progress is told about
// each step as it ends. The result holds every step that ended, also on an error.
func Run(c *cluster.Cluster, plan Plan, progress func(Step)) (Result, error) {
	r := &rehearsal{c: c, plan: plan, kinds: map[string]Kind{}, progress: progress}
	start := time.Now()
	ch, err := c.Deploy(plan.Masters, plan.Workers)
	if err != nil {
		return r.result, bosherr.WrapError(err, "Deploying the kubo cluster")
	}
	for name := range c.NodeSubnets() {
		r.kinds[name] = Kubo
	}
	r.result.Start, err = r.record(Step{Name: "deploy kubo", Updated: ch.Created}, start)
	if err != nil {
		return r.result, err
	}
	r.tell(r.result.Start)
	if err := r.adopt(); err != nil {
		return r.result, err
	}
	return r.result, r.scale()
}

func (r *rehearsal) adopt() error {
	r.c.Rolling = r.update
	defer func() { r.c.Rolling = nil }()
	if _, err := r.c.Adopt(); err != nil {
		return bosherr.WrapError(err, "Adopting flannel-dns")
	}
	if r.err != nil {
		return r.err
	}
	r.c.Logf("waiting for the probes after the last worker's update")
	time.Sleep(r.plan.Settle + time.Second)
	r.result.Converged = r.lastLoss(r.lastDone)
	return nil
}

// update is the roll's hook around each instance's update: evict a worker's pods, recreate the VM if the plan
// says so, update, bring the pods back, let the probes run, and record the step.
func (r *rehearsal) update(name string, update func() error) error {
	start := time.Now()
	step := Step{Name: "update " + name, Instance: name, Updated: []string{name}}
	w := r.c.WorkerNamed(name)
	if w != nil {
		if err := r.c.EvictPods(w); err != nil {
			return err
		}
	}
	if name == r.plan.Recreate && w != nil {
		step.Name = "recreate " + name
		if _, err := r.c.ReplaceWorkerVM(w); err != nil {
			return err
		}
	}
	excluded := map[string]bool{name: true}
	kinds := r.snapshotKinds()
	if err := update(); err != nil {
		return err
	}
	r.kinds[name] = FlannelDNS
	if w != nil {
		r.lastDone = time.Now()
		if err := r.c.ReturnPods(r.c.WorkerNamed(name)); err != nil {
			return err
		}
	}
	step, err := r.recordWithin(step, start, kinds, excluded)
	r.result.Roll = append(r.result.Roll, step)
	if err != nil && r.err == nil {
		r.err = err
	}
	r.tell(step)
	return nil
}

func (r *rehearsal) scale() error {
	start := time.Now()
	n := len(r.c.Masters()) + 1
	ch, err := r.c.ScaleMasters(n)
	if err != nil {
		return bosherr.WrapErrorf(err, "Scaling the masters to %d after adoption", n)
	}
	for name := range r.c.NodeSubnets() {
		if _, ok := r.kinds[name]; !ok {
			r.kinds[name] = FlannelDNS
		}
	}
	step := Step{Name: "scale masters to " + strconv.Itoa(n), Updated: append(slices.Clone(ch.Created), ch.Updated...)}
	r.result.Scale, err = r.recordWithin(step, start, r.snapshotKinds(), nil)
	r.tell(r.result.Scale)
	return err
}

// recordWithin lets the probes run for the plan's settle time, then records the step.
func (r *rehearsal) recordWithin(step Step, start time.Time, kinds map[string]Kind, excluded map[string]bool) (Step, error) {
	time.Sleep(r.plan.Settle)
	end := time.Now()
	time.Sleep(time.Second) // the last echoes come back
	step.Loss = r.loss(start, end, kinds, excluded)
	return r.record(step, start)
}

// record fills in the step's time, subnets, leases and claims as they are now.
func (r *rehearsal) record(step Step, start time.Time) (Step, error) {
	step.Took = time.Since(start)
	step.Subnets = r.c.NodeSubnets()
	var err error
	if step.V3, step.V2, err = r.c.LeaseHolders(); err != nil {
		return step, err
	}
	step.Claims = claims(step.Subnets, r.addresses(), step.V2, step.V3)
	return step, nil
}

func (r *rehearsal) tell(s Step) {
	if r.progress != nil {
		r.progress(s)
	}
}

// snapshotKinds is which flanneld each node runs now.
func (r *rehearsal) snapshotKinds() map[string]Kind {
	kinds := map[string]Kind{}
	for name, k := range r.kinds {
		kinds[name] = k
	}
	return kinds
}

func (r *rehearsal) addresses() map[string]string {
	addrs := map[string]string{}
	for name := range r.kinds {
		addrs[name] = r.c.InstanceAddress(name)
	}
	return addrs
}

// loss sums the probe flows in [start, end) by pair kind, between pods of workers that are not excluded; a pod
// belongs to the worker whose flannel subnet holds its address.
func (r *rehearsal) loss(start, end time.Time, kinds map[string]Kind, excluded map[string]bool) map[Pair]Count {
	owners := r.c.PodOwners()
	owner := func(addr netip.Addr) (string, bool) {
		name := owners(addr)
		return name, name != "" && !excluded[name]
	}
	counts := map[Pair]Count{}
	for _, f := range r.c.Prober.Flows(start, end) {
		from, okFrom := owner(f.From)
		to, okTo := owner(f.To)
		if !okFrom || !okTo {
			continue
		}
		pair := pairOf(kinds[from], kinds[to])
		counts[pair] = Count{Sent: counts[pair].Sent + f.Sent, Lost: counts[pair].Lost + f.Lost}
	}
	return counts
}

func pairOf(a, b Kind) Pair {
	switch {
	case a == Kubo && b == Kubo:
		return KuboKubo
	case a == FlannelDNS && b == FlannelDNS:
		return FlannelDNSFlannelDNS
	}
	return KuboFlannelDNS
}

// lastLoss is how long after since the last lost probe datagram was sent, 0 if none was lost since.
func (r *rehearsal) lastLoss(since time.Time) time.Duration {
	var last time.Duration
	for _, b := range r.c.Prober.Buckets(time.Now().Add(-time.Second)) {
		if b.Lost > 0 && b.Start.Add(b.Width).After(since) {
			last = max(last, b.Start.Add(b.Width).Sub(since))
		}
	}
	return last
}

// claims lists each subnet that more than one node claims: in its subnet file, or as the holder of a v2 or
// v3 lease (a lease names its node by address).
func claims(subnets, addresses, v2, v3 map[string]string) []string {
	byAddress := map[string]string{}
	for name, addr := range addresses {
		byAddress[addr] = name
	}
	holders := map[string]map[string]bool{}
	claim := func(subnet, node string) {
		if holders[subnet] == nil {
			holders[subnet] = map[string]bool{}
		}
		holders[subnet][node] = true
	}
	for name, s := range subnets {
		if p, err := netip.ParsePrefix(s); err == nil {
			claim(p.Masked().String(), name)
		}
	}
	for _, leases := range []map[string]string{v2, v3} {
		for key, addr := range leases {
			node := byAddress[addr]
			if node == "" {
				node = addr
			}
			claim(strings.Replace(key, "-", "/", 1), node)
		}
	}
	var out []string
	for subnet, nodes := range holders {
		if len(nodes) > 1 {
			names := make([]string, 0, len(nodes))
			for n := range nodes {
				names = append(names, n)
			}
			slices.Sort(names)
			out = append(out, subnet+": "+strings.Join(names, ", "))
		}
	}
	slices.Sort(out)
	return out
}
