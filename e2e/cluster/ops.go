package cluster

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"

	"github.com/flannel-dns/flannel-dns/e2e/director"
	"github.com/flannel-dns/flannel-dns/e2e/master"
	"github.com/flannel-dns/flannel-dns/e2e/pods"
	"github.com/flannel-dns/flannel-dns/e2e/worker"
)

const startTimeout = 2 * time.Minute

// Changes is what the director did over one step (a step may deploy several times, one per instance).
type Changes struct {
	Created, Deleted []string
	Updated          []string // with this release
	KuboUpdated      []string // the kubo-style contrast
}

func (ch *Changes) add(d Deployed) {
	ch.Created = union(ch.Created, d.Release.Created)
	ch.Deleted = union(ch.Deleted, d.Release.Deleted)
	ch.Updated = union(ch.Updated, d.Release.Updated)
	ch.KuboUpdated = union(ch.KuboUpdated, d.Kubo.Updated)
}

// Deploy is the first deploy: masters masters and workers workers.
func (c *Cluster) Deploy(masters, workers int) (Changes, error) {
	var ch Changes
	var members []*master.Member
	for i := 0; i < masters; i++ {
		m, err := c.createMaster(i)
		if err != nil {
			return ch, err
		}
		members = append(members, m)
	}
	for i := 0; i < workers; i++ {
		if err := c.createWorkerVM(i); err != nil {
			return ch, err
		}
	}
	d, err := c.replan()
	if err != nil {
		return ch, err
	}
	ch.add(d)
	c.Logf("starting etcd on %d masters", masters)
	err = parallel(len(members), func(i int) error {
		if err := members[i].Start(members, "new"); err != nil {
			return err
		}
		return members[i].WaitHealthy(startTimeout)
	})
	if err != nil {
		return ch, err
	}
	for i := 0; i < workers; i++ {
		if err := c.startWorker(c.workers[i]); err != nil {
			return ch, err
		}
	}
	return ch, nil
}

// ScaleMasters deletes the highest-index masters, or creates new ones at the lowest free indexes, one
// instance at a time as the director does with max_in_flight 1.
func (c *Cluster) ScaleMasters(n int) (Changes, error) {
	var ch Changes
	for len(c.masters) > n {
		idx := c.Masters()[len(c.masters)-1]
		if err := c.deleteMaster(idx, &ch); err != nil {
			return ch, err
		}
	}
	for len(c.masters) < n {
		if err := c.addMaster(c.freeMasterIndex(), &ch); err != nil {
			return ch, err
		}
	}
	return ch, nil
}

// ReplaceMaster deletes master idx and creates it again on a new VM with a new address.
func (c *Cluster) ReplaceMaster(idx int) (Changes, error) {
	var ch Changes
	if err := c.deleteMaster(idx, &ch); err != nil {
		return ch, err
	}
	return ch, c.addMaster(idx, &ch)
}

// AddWorker creates one more worker and waits until every other worker routes to its subnet.
func (c *Cluster) AddWorker() (Changes, error) {
	var ch Changes
	idx := 0
	for _, i := range sortedIndexes(c.workers) {
		idx = i + 1
	}
	if err := c.createWorkerVM(idx); err != nil {
		return ch, err
	}
	d, err := c.replan()
	if err != nil {
		return ch, err
	}
	ch.add(d)
	if err := c.applyUpdates(d.Release); err != nil {
		return ch, err
	}
	if err := c.startWorker(c.workers[idx]); err != nil {
		return ch, err
	}
	return ch, c.waitForRoutes(c.workers[idx])
}

func (c *Cluster) createMaster(idx int) (*master.Member, error) {
	v, err := c.newVM("master", idx)
	if err != nil {
		return nil, err
	}
	m := &master.Member{VM: v, Index: idx, Domain: Domain}
	c.masters[idx] = m
	return m, m.Install(c.ca, c.client, c.cfg.EtcdBin)
}

func (c *Cluster) addMaster(idx int, ch *Changes) error {
	c.Logf("creating master/%d", idx)
	m, err := c.createMaster(idx)
	if err != nil {
		return err
	}
	d, err := c.replan()
	if err != nil {
		return err
	}
	ch.add(d)
	if err := c.applyUpdates(d.Release); err != nil {
		return err
	}
	var cluster []*master.Member
	for _, i := range c.Masters() {
		cluster = append(cluster, c.masters[i])
	}
	var existing *master.Member
	for _, peer := range cluster {
		if peer != m {
			existing = peer
			break
		}
	}
	if err := existing.Add(m); err != nil {
		return err
	}
	if err := m.Start(cluster, "existing"); err != nil {
		return err
	}
	return m.WaitHealthy(startTimeout)
}

func (c *Cluster) deleteMaster(idx int, ch *Changes) error {
	c.Logf("deleting master/%d (drain: member remove)", idx)
	m := c.masters[idx]
	var peer *master.Member
	for _, i := range c.Masters() {
		if i != idx {
			peer = c.masters[i]
			break
		}
	}
	if peer == nil {
		return bosherr.Errorf("Cannot delete master/%d: it is the last member", idx)
	}
	if err := m.Drain(peer); err != nil {
		return err
	}
	delete(c.masters, idx)
	if err := c.removeVM("master", idx, m.VM); err != nil {
		return err
	}
	d, err := c.replan()
	if err != nil {
		return err
	}
	ch.add(d)
	return c.applyUpdates(d.Release)
}

func (c *Cluster) freeMasterIndex() int {
	for i := 0; ; i++ {
		if _, taken := c.masters[i]; !taken {
			return i
		}
	}
}

func (c *Cluster) createWorkerVM(idx int) error {
	v, err := c.newVM("worker", idx)
	if err != nil {
		return err
	}
	c.workers[idx] = &worker.Worker{VM: v, Index: idx}
	return nil
}

// startWorker installs the worker's rendered jobs, starts them, waits for flanneld's subnet and puts a pod there.
func (c *Cluster) startWorker(w *worker.Worker) error {
	c.Logf("starting %s", w.Name)
	if err := w.Install(c.cfg.Packages, c.plan.Rendered[c.ids[fmt.Sprintf("worker/%d", w.Index)]].Jobs); err != nil {
		return err
	}
	if err := w.Start(); err != nil {
		return err
	}
	return c.addPod(w)
}

// addPod waits for the worker's flanneld subnet, then puts a pod there and adds it to the probe.
func (c *Cluster) addPod(w *worker.Worker) error {
	subnet, err := c.waitForSubnet(w)
	if err != nil {
		return err
	}
	pod, err := pods.Create(w.Namespace+"-pod", w.Namespace, subnet)
	if err != nil {
		return err
	}
	c.pods = append(c.pods, pod)
	return c.Prober.Add(pod)
}

// applyUpdates restarts the processes of every worker whose configuration changed, as an update does.
func (c *Cluster) applyUpdates(plan *director.Plan) error {
	for _, w := range c.Workers() {
		inst := fmt.Sprintf("worker/%d", w.Index)
		if !plan.IsUpdated(inst) {
			continue
		}
		c.Logf("updating %s: its configuration changed", inst)
		if err := w.Install(c.cfg.Packages, plan.Rendered[c.ids[inst]].Jobs); err != nil {
			return err
		}
		if err := w.Restart(); err != nil {
			return err
		}
	}
	return nil
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

// LogTails is the end of every job log on every VM (etcd on masters, flanneld on workers), for failures.
func (c *Cluster) LogTails(n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "--- dnsmasq log:\n%s\n", LogTail(filepath.Join(c.cfg.WorkDir, "dns", "dnsmasq.log"), n))
	for _, idx := range c.Masters() {
		m := c.masters[idx]
		fmt.Fprintf(&b, "--- %s etcd log:\n%s\n", m.Name, LogTail(m.Path("/var/vcap/sys/log/etcd/etcd.log"), n))
	}
	for _, w := range c.Workers() {
		fmt.Fprintf(&b, "--- %s flanneld log:\n%s\n", w.Name, LogTail(w.Path("/var/vcap/sys/log/flanneld/flanneld.log"), n))
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
