package cluster

// The director's part: the deployment from the manifest, the instances, a deploy's plan, sync_dns, and the
// roll that hands each created or updated instance its jobs, canary first, stopping at the first failure.

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"time"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"

	"github.com/flannel-dns/flannel-dns/src/director/templates"
	"github.com/flannel-dns/flannel-dns/src/e2e/agent"
	"github.com/flannel-dns/flannel-dns/src/e2e/boshdns"
	"github.com/flannel-dns/flannel-dns/src/e2e/director"
	"github.com/flannel-dns/flannel-dns/src/e2e/manifest"
	"github.com/flannel-dns/flannel-dns/src/e2e/master"
	"github.com/flannel-dns/flannel-dns/src/e2e/stemcell"
	"github.com/flannel-dns/flannel-dns/src/e2e/vm"
	"github.com/flannel-dns/flannel-dns/src/e2e/worker"
)

// RollError is a deploy that stopped at an instance, as `bosh deploy` stops at a failing canary.
type RollError struct {
	Instance string
	Canary   bool
	Err      error
}

func (e *RollError) Error() string {
	kind := "instance"
	if e.Canary {
		kind = "canary"
	}
	return fmt.Sprintf("Updating %s %s: %v", kind, e.Instance, e.Err)
}

func (e *RollError) Unwrap() error { return e.Err }

// loadDeployments builds the deployment twice from the manifest, sharing one vars store: with flannel-dns's
// ops-files (what runs), and without them (kubo's flanneld, only rendered, for the contrast).
func (c *Cluster) loadDeployments() error {
	store := filepath.Join(c.cfg.WorkDir, "vars-store.yml")
	if c.cfg.Kubo != nil && !c.adopted {
		return c.loadKubo(store)
	}
	ops := c.cfg.opsFiles()
	if c.cfg.Previous == nil || c.upgraded {
		dev, err := c.cfg.devRelease()
		if err != nil {
			return err
		}
		ops = append(ops, dev)
	}
	adopted, err := manifest.Build(c.cfg.source(store, append(ops, c.extraOps...)...))
	if err != nil {
		return err
	}
	before, err := manifest.Build(c.cfg.source(store, c.cfg.simulated()))
	if err != nil {
		return err
	}
	if c.release, err = c.releasesOf(adopted, c.runs); err != nil {
		return err
	}
	c.kubo, err = c.releasesOf(before, func(string, string) bool { return false })
	c.update = adopted.Update
	return err
}

// persistentDiskMiB is the masters' persistent disk in the CFCR manifests.
const persistentDiskMiB = 5120

// boshNetwork is the instances' network as the director describes it to the jobs.
var boshNetwork = director.Network{Name: NetworkName, Netmask: "255.255.255.0", Gateway: gateway.Addr().String()}

// releasesOf renders the jobs of d with the director's template code, flannel-dns's from the upload of the
// version d names; run says which of them the VMs run.
func (c *Cluster) releasesOf(d manifest.Deployment, run func(release, job string) bool) (*director.Releases, error) {
	dirs := c.cfg.releases()
	if version, ok := d.Releases[ReleaseName]; ok {
		picked, err := director.Pick(ReleaseName, version, c.cfg.uploaded())
		if err != nil {
			return nil, err
		}
		dirs[ReleaseName] = picked
	}
	return &director.Releases{Placed: d.Deployment, Dirs: dirs, Runs: run, Network: boshNetwork,
		Templates: templates.Renderer{Lib: c.cfg.directorLib()}}, nil
}

// runs tells which jobs the simulated VMs run: this release's, bpm's, bosh-dns's, cfcr-etcd's etcd, docker's
// docker, and kubo's flanneld and aliases while the cluster has not adopted flannel-dns. The rest (kubelet,
// kube-apiserver, ...) is rendered, for the director's decisions, but not run.
func (c *Cluster) runs(release, job string) bool {
	switch release {
	case "flannel-dns", "bpm", "bosh-dns":
		return true
	case "cfcr-etcd":
		return job == "etcd"
	case "docker":
		return job == "docker"
	case "kubo":
		return c.cfg.Kubo != nil && !c.adopted && (job == "flanneld" || job == "kubo-dns-aliases")
	}
	return false
}

// instances is the deployment as the director sees it now, groups in the manifest's order.
func (c *Cluster) instances() []director.Instance {
	var list []director.Instance
	for _, g := range c.release.Placed.Groups {
		var indexes []int
		switch g.Name {
		case "master":
			indexes = c.Masters()
		case "worker":
			indexes = sortedIndexes(c.workers)
		}
		for i, idx := range indexes {
			list = append(list, director.Instance{Group: g.Name, Index: idx, ID: c.ids[instanceName(g.Name, idx)],
				Address: c.agents[instanceName(g.Name, idx)].VM.Address.String(), AZ: g.AZs[idx%len(g.AZs)], Bootstrap: i == 0,
				PersistentDisk: g.PersistentDisk})
		}
	}
	return list
}

// replan renders everything again, as a deploy does, and pushes the DNS records to every VM (sync_dns).
func (c *Cluster) replan() (Deployed, error) {
	insts := c.instances()
	plan, err := director.Deploy(c.release, insts, &director.Plan{Rendered: c.applied})
	if err != nil {
		return Deployed{}, err
	}
	kubo, err := director.Deploy(c.kubo, insts, c.kuboPlan)
	if err != nil {
		return Deployed{}, err
	}
	c.plan, c.kuboPlan = plan, kubo
	return Deployed{Release: plan, Kubo: kubo}, c.syncDNS(insts)
}

// syncDNS writes the records of insts to every VM, as the director's sync_dns does after a change.
func (c *Cluster) syncDNS(insts []director.Instance) error {
	c.dnsVersion++
	d := boshdns.Deployment{Name: Deployment, Network: NetworkName, GroupIDs: map[string]int{}, AZIDs: map[string]int{}}
	for i, g := range c.release.Placed.Groups {
		d.GroupIDs[g.Name] = i + 1
		for _, az := range g.AZs {
			if _, ok := d.AZIDs[az]; !ok {
				d.AZIDs[az] = len(d.AZIDs) + 1
			}
		}
	}
	records, err := boshdns.Records(c.dnsVersion, d, insts)
	if err != nil {
		return err
	}
	for _, a := range c.agents {
		if err := a.SyncDNS(records); err != nil {
			return err
		}
	}
	return c.awaitRecords(insts)
}

// awaitRecords waits until every running bosh-dns answers every instance's BOSH name with its address. bosh-dns
// reads records.json every few seconds; on a real IaaS the minutes it takes to create a VM pass before the new
// instance starts, here they do not, so the harness waits for the records instead.
func (c *Cluster) awaitRecords(insts []director.Instance) error {
	deadline := time.Now().Add(30 * time.Second)
	for _, a := range c.agents {
		if a.PID(dnsProcess) == 0 {
			continue
		}
		for _, inst := range insts {
			name := fmt.Sprintf("%s.%s.%s.%s.bosh", inst.ID, inst.Group, NetworkName, Deployment)
			for {
				answer, err := boshdns.Query(a.VM.Namespace, boshdns.Resolver, name)
				if err == nil && slices.Equal(answer.Addresses, []string{inst.Address}) {
					break
				}
				if time.Now().After(deadline) {
					return bosherr.Errorf("bosh-dns on %s does not answer %s with %s after 30s: %v %v", a.VM.Name, name, inst.Address, answer, err)
				}
				time.Sleep(200 * time.Millisecond)
			}
		}
	}
	return nil
}

// roll hands every instance that plan creates or updates its jobs, group by group in the manifest's order,
// each group's first instances as canaries, one at a time, and stops at the first that fails.
func (c *Cluster) roll(plan *director.Plan) error {
	for _, g := range c.release.Placed.Groups {
		var names []string
		for _, inst := range c.instances() {
			name := inst.Name()
			if inst.Group == g.Name && (slices.Contains(plan.Created, name) || plan.IsUpdated(name)) {
				names = append(names, name)
			}
		}
		for i, name := range names {
			canary := i < c.update.Canaries
			watch := c.update.UpdateWatch
			if canary {
				watch = c.update.CanaryWatch
			}
			rendered, _ := plan.Of(name)
			c.Logf("deploying %s (canary: %t)", name, canary)
			update := func() error { return c.agents[name].Deploy(rendered.Jobs, agent.Watch(watch)) }
			if err := c.rolled(name, update); err != nil {
				return &RollError{Instance: name, Canary: canary, Err: err}
			}
			c.applied[rendered.Instance.ID] = rendered
		}
	}
	return nil
}

// rolled runs the update of the instance called name, through Rolling when it is set.
func (c *Cluster) rolled(name string, update func() error) error {
	if c.Rolling != nil {
		return c.Rolling(name, update)
	}
	return update()
}

// newVM creates the VM of a new instance group/index at the group's next address, with its agent.
func (c *Cluster) newVM(group string, index int) (*vm.VM, *agent.Agent, error) {
	addr := c.nextIP[group]
	if group == "master" && addr.Compare(lastMaster) > 0 {
		return nil, nil, bosherr.Errorf("No master address left after %s", lastMaster)
	}
	c.nextIP[group] = addr.Next()
	c.ids[instanceName(group, index)] = newID()
	return c.bootVM(group, index, addr)
}

// bootVM creates a VM with an empty disk for the instance group/index at addr, and its agent.
func (c *Cluster) bootVM(group string, index int, addr netip.Addr) (*vm.VM, *agent.Agent, error) {
	name := fmt.Sprintf("%s-%d", group, index)
	host, err := c.net.AddHost(name, addr)
	if err != nil {
		return nil, nil, err
	}
	c.disks++
	line := c.stemcell
	if c.kernel != (stemcell.Kernel{}) {
		line.Kernel = c.kernel
	}
	v, err := vm.New(host, filepath.Join(c.cfg.WorkDir, "vms", fmt.Sprintf("%s-%s-%d", name, addr, c.disks)), line, c.boot)
	if err != nil {
		return nil, nil, err
	}
	a, err := agent.New(v, c.packages, c.cfg.monit(), c.Logf)
	if err != nil {
		_ = v.Destroy()
		return nil, nil, err
	}
	if g, ok := c.release.Placed.Group(group); ok && g.PersistentDisk {
		// The persistent disk, as the agent mounts it; bpm refuses a job that wants it when it is missing.
		if err := os.MkdirAll(v.Path("/var/vcap/store"), 0o755); err != nil {
			return nil, nil, bosherr.WrapErrorf(err, "Giving %s its persistent disk", name)
		}
		a.PersistentDisk = persistentDiskMiB
	}
	c.agents[instanceName(group, index)] = a
	return v, a, nil
}

func (c *Cluster) createMaster(idx int) (*master.Member, error) {
	v, a, err := c.newVM("master", idx)
	if err != nil {
		return nil, err
	}
	m := &master.Member{VM: v, Agent: a, Index: idx, Domain: Domain}
	c.masters[idx] = m
	return m, nil
}

func (c *Cluster) createWorker(idx int) (*worker.Worker, error) {
	v, a, err := c.newVM("worker", idx)
	if err != nil {
		return nil, err
	}
	w := &worker.Worker{VM: v, Agent: a, Index: idx}
	c.workers[idx] = w
	return w, nil
}

// deleteVM stops the instance's jobs (drain, stop) and deletes its VM, as the director deletes an instance:
// its persistent disk goes with it, which is what cfcr-etcd's drain removes a member on.
func (c *Cluster) deleteVM(group string, index int) error {
	name := instanceName(group, index)
	if err := c.destroyVM(name, agent.Delete); err != nil {
		return err
	}
	delete(c.applied, c.ids[name])
	delete(c.agents, name)
	delete(c.ids, name)
	return nil
}

// destroyVM drains (for kind) and stops the jobs of the instance called name, then destroys its VM and disk.
func (c *Cluster) destroyVM(name string, kind agent.DrainKind) error {
	a := c.agents[name]
	if err := a.Drain(kind); err != nil {
		return err
	}
	if err := a.Stop(); err != nil {
		return err
	}
	a.Halt()
	if err := a.VM.Destroy(); err != nil {
		return err
	}
	if err := c.net.RemoveHost(a.VM.Host.Name); err != nil {
		return err
	}
	return os.RemoveAll(a.VM.Root)
}
