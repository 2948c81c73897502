package cluster

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"

	"github.com/flannel-dns/flannel-dns/src/e2e/agent"
	"github.com/flannel-dns/flannel-dns/src/e2e/stemcell"
	"github.com/flannel-dns/flannel-dns/src/e2e/worker"
)

const startTimeout = 2 * time.Minute

// Changes is what the director did over one step (a step may deploy several times, one per instance).
type Changes struct {
	Created, Deleted []string
	Updated          []string // with this release
	KuboUpdated      []string // the kubo-style contrast
}

// merge adds what another deploy of the same step did.
func (ch *Changes) merge(other Changes) {
	ch.Created = union(ch.Created, other.Created)
	ch.Deleted = union(ch.Deleted, other.Deleted)
	ch.Updated = union(ch.Updated, other.Updated)
	ch.KuboUpdated = union(ch.KuboUpdated, other.KuboUpdated)
}

func (ch *Changes) add(d Deployed) {
	ch.Created = union(ch.Created, d.Release.Created)
	ch.Deleted = union(ch.Deleted, d.Release.Deleted)
	ch.Updated = union(ch.Updated, d.Release.Updated)
	ch.KuboUpdated = union(ch.KuboUpdated, d.Kubo.Updated)
}

// Deploy is the first deploy: masters masters and workers workers.
func (c *Cluster) Deploy(masters, workers int) (Changes, error) {
	for i := 0; i < masters; i++ {
		if _, err := c.createMaster(i); err != nil {
			return Changes{}, err
		}
	}
	for i := 0; i < workers; i++ {
		if _, err := c.createWorker(i); err != nil {
			return Changes{}, err
		}
	}
	return c.deploy()
}

// deploy plans against the instances as they are now, rolls what changed and puts pods on every new worker.
func (c *Cluster) deploy() (Changes, error) {
	var ch Changes
	d, err := c.replan()
	if err != nil {
		return ch, err
	}
	ch.add(d)
	if err := c.roll(d.Release); err != nil {
		return ch, err
	}
	for _, w := range c.Workers() {
		if slices.Contains(d.Release.Created, instanceName("worker", w.Index)) {
			if err := c.addPods(w); err != nil {
				return ch, err
			}
		}
	}
	return ch, nil
}

// ScaleMasters changes the number of masters in one deploy, as `bosh deploy` with a new instance count does:
// the highest-index masters are deleted first (drain, with their disk going: cfcr-etcd's drain removes the
// member), new ones get the lowest free indexes, then every instance whose rendered jobs changed is updated and
// every new one created, group by group, one at a time, canary first.
func (c *Cluster) ScaleMasters(n int) (Changes, error) {
	var deleted []string
	for len(c.masters) > n {
		idx := c.Masters()[len(c.masters)-1]
		if err := c.deleteMaster(idx); err != nil {
			return Changes{Deleted: deleted}, err
		}
		deleted = append(deleted, instanceName("master", idx))
	}
	for len(c.masters) < n {
		if _, err := c.createMaster(c.freeMasterIndex()); err != nil {
			return Changes{Deleted: deleted}, err
		}
	}
	ch, err := c.deploy()
	ch.Deleted = union(ch.Deleted, deleted)
	return ch, err
}

// ReplaceMaster deletes master idx and creates it again, in the same deploy, on a new VM with a new ID and
// address.
func (c *Cluster) ReplaceMaster(idx int) (Changes, error) {
	if err := c.deleteMaster(idx); err != nil {
		return Changes{}, err
	}
	if _, err := c.createMaster(idx); err != nil {
		return Changes{}, err
	}
	ch, err := c.deploy()
	ch.Deleted = union(ch.Deleted, []string{instanceName("master", idx)})
	return ch, err
}

// AddWorker creates one more worker and waits until every other worker routes to its subnet.
func (c *Cluster) AddWorker() (Changes, error) {
	w, err := c.createWorker(c.freeWorkerIndex())
	if err != nil {
		return Changes{}, err
	}
	ch, err := c.deploy()
	if err != nil {
		return ch, err
	}
	return ch, c.waitForRoutes(w)
}

// AddWorkerOn is AddWorker on a VM that boots kernel instead of the stemcell line's: trusty's 4.4, say, which
// has no SOCK_DESTROY, as no kernel built without CONFIG_INET_DIAG_DESTROY has.
func (c *Cluster) AddWorkerOn(kernel stemcell.Kernel) (Changes, error) {
	c.kernel = kernel
	defer func() { c.kernel = stemcell.Kernel{} }()
	return c.AddWorker()
}

// deleteMaster deletes master idx as the director deletes an unneeded instance.
func (c *Cluster) deleteMaster(idx int) error {
	c.Logf("deleting master/%d", idx)
	if err := c.deleteVM("master", idx); err != nil {
		return err
	}
	delete(c.masters, idx)
	return nil
}

func (c *Cluster) freeMasterIndex() int {
	for i := 0; ; i++ {
		if _, taken := c.masters[i]; !taken {
			return i
		}
	}
}

func (c *Cluster) freeWorkerIndex() int {
	idx := 0
	for _, i := range sortedIndexes(c.workers) {
		idx = i + 1
	}
	return idx
}

func (c *Cluster) waitForSubnet(w *worker.Worker) (netip.Prefix, error) {
	deadline := time.Now().Add(startTimeout)
	for {
		env, err := w.SubnetEnv(SubnetFile)
		if err == nil && env["FLANNEL_SUBNET"] != "" {
			subnet, err := netip.ParsePrefix(env["FLANNEL_SUBNET"])
			if err != nil {
				return netip.Prefix{}, bosherr.WrapErrorf(err, "FLANNEL_SUBNET on %s", w.Name)
			}
			return subnet, nil
		}
		if time.Now().After(deadline) {
			return netip.Prefix{}, bosherr.Errorf("No subnet on %s after %s; see %s", w.Name, startTimeout, w.Path("/var/vcap/sys/log"))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// waitForRoutes waits until every other worker has a route to newcomer's subnet through flannel.1.
func (c *Cluster) waitForRoutes(newcomer *worker.Worker) error {
	subnet, err := c.waitForSubnet(newcomer)
	if err != nil {
		return err
	}
	dest := subnet.Masked().String()
	deadline := time.Now().Add(startTimeout)
	for _, w := range c.Workers() {
		if w == newcomer {
			continue
		}
		for {
			out, err := w.Run("ip", "route", "show", dest)
			if err == nil && strings.Contains(out, "flannel.1") {
				break
			}
			if time.Now().After(deadline) {
				return bosherr.Errorf("%s has no route to %s's subnet %s", w.Name, newcomer.Name, dest)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	return nil
}

func union(a, b []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range append(append([]string(nil), a...), b...) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}

// LogTails is the end of every non-empty log on every VM (the jobs', bpm's, the lifecycle scripts', etcd's),
// for failures.
func (c *Cluster) LogTails(n int) string {
	var b strings.Builder
	names := make([]string, 0, len(c.agents))
	for name := range c.agents {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		v := c.agents[name].VM
		logs, _ := filepath.Glob(v.Path("/var/vcap/sys/log/*/*.log"))
		for _, log := range append(logs, v.Path("/var/vcap/monit/monit.log")) {
			if info, err := os.Stat(log); err == nil && info.Size() > 0 {
				rel, _ := filepath.Rel(v.Path("/var/vcap"), log)
				fmt.Fprintf(&b, "--- %s %s:\n%s\n", name, rel, LogTail(log, n))
			}
		}
	}
	return b.String()
}

// LogTail is the end of a process's log on a VM, for failure messages.
func LogTail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Redeploy updates w with the jobs it has, as the director does when something of the instance changed:
// drain, stop, pre-start, start, post-start.
func (c *Cluster) Redeploy(w *worker.Worker) error {
	rendered := c.applied[c.ids[instanceName("worker", w.Index)]]
	c.Logf("updating %s", w.Name)
	return w.Agent.Deploy(rendered.Jobs, agent.Watch(c.update.UpdateWatch))
}
