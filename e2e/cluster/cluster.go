// Package cluster is the simulated CFCR deployment: master VMs running etcd, worker VMs running this
// release, dnsmasq as bosh-dns, and the director's part (render, compare, create/update/delete, sync_dns).
package cluster

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"

	"github.com/flannel-dns/flannel-dns/e2e/boshdns"
	"github.com/flannel-dns/flannel-dns/e2e/director"
	"github.com/flannel-dns/flannel-dns/e2e/dnsmasq"
	"github.com/flannel-dns/flannel-dns/e2e/master"
	"github.com/flannel-dns/flannel-dns/e2e/network"
	"github.com/flannel-dns/flannel-dns/e2e/pods"
	"github.com/flannel-dns/flannel-dns/e2e/vm"
	"github.com/flannel-dns/flannel-dns/e2e/worker"
	"github.com/flannel-dns/flannel-dns/testenv/pki"
)

const (
	Deployment  = "cfcr"
	NetworkName = "default"
	Domain      = "cfcr.internal"
	PodNetwork  = "198.18.0.0/15"
	SubnetFile  = "/run/flannel/subnet.env"
	// LauncherProcess is the bpm process name of the flanneld job.
	LauncherProcess = "flanneld"
)

var gateway = netip.MustParsePrefix("192.0.2.1/24")

// Config says where the real parts are.
type Config struct {
	WorkDir     string // scratch space for VM roots and dnsmasq
	EtcdBin     string // directory holding etcd and etcdctl
	Packages    string // directory of compiled packages of this release (one directory per package)
	ReleaseJobs string // this release's jobs/
	KuboJobs    string // the kubo-v0.21-style contrast's jobs (rendered only, never run)
	Logf        func(format string, args ...any)
}

// Cluster is the running deployment.
type Cluster struct {
	cfg    Config
	net    *network.Network
	dns    *dnsmasq.Server
	ca     *pki.CA
	client pki.Pair

	masters map[int]*master.Member
	workers map[int]*worker.Worker
	ids     map[string]string // instance name -> ID; a replaced instance gets a new ID
	nextIP  map[string]netip.Addr

	release, kubo  director.Renderer
	plan, kuboPlan *director.Plan
	Prober         *pods.Prober
	pods           []*pods.Pod
}

// Deployed is what one deploy did.
type Deployed struct {
	Release *director.Plan
	Kubo    *director.Plan
}

// New creates the network, the DNS server and the CA; nothing is deployed yet.
func New(cfg Config) (*Cluster, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	if err := network.SweepLeftovers(); err != nil {
		return nil, err
	}
	c := &Cluster{cfg: cfg, masters: map[int]*master.Member{}, workers: map[int]*worker.Worker{},
		ids: map[string]string{}, Prober: pods.NewProber(20 * time.Millisecond),
		nextIP: map[string]netip.Addr{"master": netip.MustParseAddr("192.0.2.10"), "worker": netip.MustParseAddr("192.0.2.100")}}
	var err error
	if c.net, err = network.New(network.Prefix(), gateway); err != nil {
		return nil, err
	}
	dnsDir := filepath.Join(cfg.WorkDir, "dns")
	if err := os.MkdirAll(dnsDir, 0o755); err != nil {
		return c, bosherr.WrapError(err, "Creating the DNS server's directory")
	}
	if c.dns, err = dnsmasq.Start(c.net.SwitchNamespace(), gateway.Addr().String(), dnsDir, []string{"internal", "bosh"}); err != nil {
		return c, err
	}
	pkiDir := filepath.Join(cfg.WorkDir, "pki")
	if err := os.MkdirAll(pkiDir, 0o700); err != nil {
		return c, bosherr.WrapError(err, "Creating the certificates' directory")
	}
	if c.ca, err = pki.NewCA(pkiDir, "cfcr-etcd-ca"); err != nil {
		return c, err
	}
	if c.client, err = c.ca.Issue(pki.Client("flanneld")); err != nil {
		return c, err
	}
	return c, c.loadJobs()
}

// check names a real part that is not where the config says, before anything is created.
func (cfg Config) check() error {
	wanted := map[string]string{
		"etcd binary (EtcdBin)":          filepath.Join(cfg.EtcdBin, "etcd"),
		"etcdctl binary (EtcdBin)":       filepath.Join(cfg.EtcdBin, "etcdctl"),
		"flanneld package (Packages)":    filepath.Join(cfg.Packages, "flannel", "bin", "flanneld"),
		"launcher package (Packages)":    filepath.Join(cfg.Packages, "flannel-launcher", "bin", "flannel-launcher"),
		"flanneld job (ReleaseJobs)":     filepath.Join(cfg.ReleaseJobs, "flanneld", "spec"),
		"kubo-style job (KuboJobs)":      filepath.Join(cfg.KuboJobs, "flanneld", "spec"),
		"cfcr-dns-aliases (ReleaseJobs)": filepath.Join(cfg.ReleaseJobs, "cfcr-dns-aliases", "spec"),
	}
	for what, path := range wanted {
		if _, err := os.Stat(path); err != nil {
			return bosherr.Errorf("No %s at '%s'", what, path)
		}
	}
	return nil
}

// loadJobs prepares the renderers with the manifest's properties: the etcd client certificate and
// the pod network for flanneld, defaults for the rest.
func (c *Cluster) loadJobs() error {
	tls := map[string]interface{}{}
	for key, file := range map[string]string{"ca": c.ca.CertFile, "certificate": c.client.CertFile, "private_key": c.client.KeyFile} {
		pem, err := os.ReadFile(file)
		if err != nil {
			return bosherr.WrapErrorf(err, "Reading %s", file)
		}
		tls[key] = string(pem)
	}
	flanneld := map[string]interface{}{
		"pod-network-cidr": PodNetwork,
		"backend-type":     "vxlan",
		"tls":              map[string]interface{}{"etcdctl": tls},
	}
	props := map[string]map[string]interface{}{"flanneld": flanneld, "cfcr-dns-aliases": {}}
	var err error
	if c.release, err = newJobs(c.cfg.ReleaseJobs, []string{"flanneld", "cfcr-dns-aliases"}, props, nil); err != nil {
		return err
	}
	c.kubo, err = newJobs(c.cfg.KuboJobs, []string{"flanneld"}, props, c.etcdLink)
	return err
}

// etcdLink is what the director hands a consumer of the masters' etcd link.
func (c *Cluster) etcdLink() map[string]interface{} {
	var instances []interface{}
	for _, idx := range c.Masters() {
		m := c.masters[idx]
		instances = append(instances, map[string]interface{}{"name": "master", "index": idx,
			"id": c.ids[fmt.Sprintf("master/%d", idx)], "address": m.Address.String()})
	}
	return map[string]interface{}{"etcd": map[string]interface{}{"instances": instances}}
}

// Destroy stops every process and removes every namespace; it is safe to call on a half-built cluster.
func (c *Cluster) Destroy() error {
	if c == nil {
		return nil
	}
	c.Prober.Stop()
	for _, w := range c.workers {
		w.StopAll(5 * time.Second)
	}
	for _, m := range c.masters {
		m.StopAll(5 * time.Second)
	}
	var errs []error
	for _, p := range c.pods {
		if err := p.Remove(); err != nil {
			errs = append(errs, err)
		}
	}
	c.dns.Stop()
	if c.net != nil {
		if err := c.net.Destroy(); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return bosherr.Errorf("Tearing down: %v", errs)
	}
	return nil
}

// Logf narrates through the configured logger.
func (c *Cluster) Logf(format string, args ...any) {
	if c.cfg.Logf != nil {
		c.cfg.Logf(format, args...)
	}
}

// Masters lists the master indexes, ascending.
func (c *Cluster) Masters() []int { return sortedIndexes(c.masters) }

// Workers lists the workers, by index.
func (c *Cluster) Workers() []*worker.Worker {
	var ws []*worker.Worker
	for _, i := range sortedIndexes(c.workers) {
		ws = append(ws, c.workers[i])
	}
	return ws
}

// Leases lists the keys of flannel's subnet leases. A read may fail for a moment while the members elect
// a leader after a membership change, so it is retried.
func (c *Cluster) Leases() (string, error) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, err := c.AnyMaster().Etcdctl("get", "--prefix", "--keys-only", "/coreos.com/network/subnets/")
		if err == nil || time.Now().After(deadline) {
			return out, err
		}
		c.Logf("reading leases failed, retrying: %s", err)
		time.Sleep(time.Second)
	}
}

// AnyMaster is the lowest-index master, to run etcdctl on.
func (c *Cluster) AnyMaster() *master.Member { return c.masters[c.Masters()[0]] }

func (c *Cluster) newVM(group string, index int) (*vm.VM, error) {
	name := fmt.Sprintf("%s-%d", group, index)
	addr := c.nextIP[group]
	c.nextIP[group] = addr.Next()
	host, err := c.net.AddHost(name, addr)
	if err != nil {
		return nil, err
	}
	c.ids[fmt.Sprintf("%s/%d", group, index)] = newID()
	return vm.New(host, filepath.Join(c.cfg.WorkDir, "vms", name+"-"+addr.String()), gateway.Addr().String())
}

func (c *Cluster) removeVM(group string, index int, v *vm.VM) error {
	v.StopAll(5 * time.Second)
	delete(c.ids, fmt.Sprintf("%s/%d", group, index))
	return c.net.RemoveHost(v.Host.Name)
}

// instances is the deployment as the director sees it now.
func (c *Cluster) instances() []director.Instance {
	var list []director.Instance
	for i, idx := range c.Masters() {
		list = append(list, c.instance("master", idx, c.masters[idx].Address, i == 0, []string{"cfcr-dns-aliases"}))
	}
	for i, w := range c.Workers() {
		list = append(list, c.instance("worker", w.Index, w.Address, i == 0, []string{"flanneld", "cfcr-dns-aliases"}))
	}
	return list
}

func (c *Cluster) instance(group string, index int, addr netip.Addr, bootstrap bool, jobs []string) director.Instance {
	return director.Instance{Group: group, Index: index, ID: c.ids[fmt.Sprintf("%s/%d", group, index)],
		Address: addr.String(), Bootstrap: bootstrap, Jobs: jobs}
}

// kuboInstances is the same deployment with kubo-style workers (only the fixture flanneld job).
func (c *Cluster) kuboInstances() []director.Instance {
	var list []director.Instance
	for _, inst := range c.instances() {
		if inst.Group == "worker" {
			inst.Jobs = []string{"flanneld"}
		} else {
			inst.Jobs = nil
		}
		list = append(list, inst)
	}
	return list
}

// plan renders everything again, as a deploy does, then pushes the DNS records (sync_dns).
func (c *Cluster) replan() (Deployed, error) {
	plan, err := director.Deploy(c.release, c.instances(), c.plan)
	if err != nil {
		return Deployed{}, err
	}
	kubo, err := director.Deploy(c.kubo, c.kuboInstances(), c.kuboPlan)
	if err != nil {
		return Deployed{}, err
	}
	c.plan, c.kuboPlan = plan, kubo
	recs, err := boshdns.Records(plan, NetworkName, Deployment)
	if err != nil {
		return Deployed{}, err
	}
	if err := c.dns.Set(recs); err != nil {
		return Deployed{}, err
	}
	return Deployed{Release: plan, Kubo: kubo}, nil
}

func newID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func sortedIndexes[T any](m map[int]T) []int {
	var idx []int
	for i := range m {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	return idx
}

func parallel(n int, f func(i int) error) error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = f(i)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
