// Package cluster is the simulated CFCR deployment: the upstream manifest with flannel-dns's ops-files, its
// jobs placed on master and worker VMs as the director places them, rendered and run there by an agent
// under the real bpm and beside the real bosh-dns; real etcd on the masters; and the director's part
// (render, compare, roll canary first, sync_dns).
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

	"github.com/flannel-dns/flannel-dns/src/e2e/agent"
	"github.com/flannel-dns/flannel-dns/src/e2e/cni"
	"github.com/flannel-dns/flannel-dns/src/e2e/director"
	"github.com/flannel-dns/flannel-dns/src/e2e/manifest"
	"github.com/flannel-dns/flannel-dns/src/e2e/master"
	"github.com/flannel-dns/flannel-dns/src/e2e/network"
	"github.com/flannel-dns/flannel-dns/src/e2e/pods"
	"github.com/flannel-dns/flannel-dns/src/e2e/stemcell"
	"github.com/flannel-dns/flannel-dns/src/e2e/vm"
	"github.com/flannel-dns/flannel-dns/src/e2e/worker"
)

const (
	Deployment  = "cfcr"
	NetworkName = "default"
	Domain      = "cfcr.internal"
	PodNetwork  = "198.18.0.0/15"
	SubnetFile  = "/run/flannel/subnet.env"
	// LauncherProcess is the monit and bpm process name of the flanneld job.
	LauncherProcess = worker.Process
)

var gateway = netip.MustParsePrefix("192.0.2.1/24")

// Masters get addresses from firstMaster on, up to lastMaster (a replaced master takes a new one); workers
// from 192.0.2.100.
var firstMaster, lastMaster = netip.MustParseAddr("192.0.2.10"), netip.MustParseAddr("192.0.2.49")

// Config says where the real parts are.
type Config struct {
	WorkDir  string // scratch space for VM disks and the vars store
	Packages string // this release's compiled packages (one directory per package)
	Cache    string // FLANNEL_DNS_CACHE: bin/bosh, and the bpm and bosh-dns releases (scripts/build-thirdparty)
	Repo     string // this checkout: jobs/, manifests/ops-files/, src/e2e/
	Lane     Lane   // the manifest and the release versions
	// Kubo, when set, starts the deployment as a CFCR cluster runs before it adopts flannel-dns (kubo.go).
	Kubo *Kubo
	// Previous, when set, is a final release of flannel-dns uploaded before this checkout's dev release: the
	// cluster deploys it, with the ops-files as they are, until Upgrade (upgrade.go).
	Previous *director.Release
	Logf     func(format string, args ...any)
}

func (cfg Config) bosh() string  { return filepath.Join(cfg.Cache, "bin", "bosh") }
func (cfg Config) monit() string { return filepath.Join(cfg.Cache, "monit-5.2.5") }

// directorLib is bosh-common's lib directory, the director's template code (scripts/build-thirdparty).
func (cfg Config) directorLib() string {
	return filepath.Join(cfg.Cache, "bosh-director-templates", "src", "bosh-common", "lib")
}

// opsFiles are what an operator adopting flannel-dns applies to the lane's manifest, then the simulated
// cluster's own.
func (cfg Config) opsFiles() []string {
	return []string{filepath.Join(cfg.Repo, "manifests", "ops-files", "use-flannel-dns.yml"),
		filepath.Join(cfg.Repo, "manifests", "ops-files", cfg.Lane.Companion), cfg.simulated()}
}

func (cfg Config) simulated() string {
	return filepath.Join(cfg.Repo, "src", "e2e", "manifest", "simulated.yml")
}

// releases are the jobs/ directories and versions of every release the manifest names.
func (cfg Config) releases() map[string]director.Release {
	unpacked := func(name, version string) director.Release {
		return director.Release{Jobs: filepath.Join(cfg.releaseDir(name, version), "jobs"), Version: version}
	}
	return map[string]director.Release{
		ReleaseName: cfg.dev(),
		"bpm":       unpacked("bpm", cfg.Lane.BPM),
		"bosh-dns":  unpacked("bosh-dns", cfg.Lane.BoshDNS),
		"kubo":      unpacked("kubo-release", cfg.Lane.Kubo),
		"cfcr-etcd": unpacked("cfcr-etcd-release", cfg.Lane.CfcrEtcd),
		"docker":    unpacked("docker-boshrelease", cfg.Lane.Docker),
	}
}

// packages maps every compiled package to its directory.
func (cfg Config) packages() (map[string]string, error) {
	pkgs := map[string]string{"bpm": filepath.Join(cfg.bpmRelease(), "compiled", "bpm"), "etcd": cfg.etcdPackage(),
		"bosh-dns": filepath.Join(cfg.boshDNSRelease(), "compiled", "bosh-dns"), "cni": cfg.cniPackage(),
		// docker's job (scripts/build-docker-packages): Debian's dockerd, the release's own helpers, no ctop
		"docker": filepath.Join(cfg.Cache, "docker-package"), "bosh-helpers": filepath.Join(cfg.Cache, "bosh-helpers-"+cfg.Lane.Docker),
		"ctop": filepath.Join(cfg.Cache, "ctop-package")}
	entries, err := os.ReadDir(cfg.Packages)
	if err != nil {
		return nil, bosherr.WrapErrorf(err, "Reading compiled packages at %s", cfg.Packages)
	}
	for _, e := range entries {
		pkgs[e.Name()] = filepath.Join(cfg.Packages, e.Name())
	}
	if cfg.Kubo != nil { // what kubo's flanneld job names
		pkgs["flanneld"], pkgs["etcdctl"] = cfg.kuboFlanneld(), cfg.kuboEtcdctl()
		pkgs["pid_utils"] = filepath.Join(cfg.Repo, "src", "e2e", "kubo", "pid_utils")
	}
	return pkgs, nil
}

// Cluster is the running deployment.
type Cluster struct {
	cfg      Config
	net      *network.Network
	packages map[string]string
	release  *director.Releases // the deployment with flannel-dns
	kubo     *director.Releases // the same manifest without flannel-dns's ops-files (rendered only)
	update   manifest.Update

	masters map[int]*master.Member
	workers map[int]*worker.Worker
	agents  map[string]*agent.Agent // by instance name
	ids     map[string]string       // instance name -> ID; a replaced instance gets a new ID
	nextIP  map[string]netip.Addr

	plan, kuboPlan *director.Plan
	// applied is what each instance (by ID) runs: the director compares a deploy with it, not with the plan
	// of the last deploy, which may have stopped before reaching every instance.
	applied    map[string]director.Rendered
	dnsVersion int
	disks      int // VM disks made so far; each VM gets a new one
	extraOps   []string
	Prober     *pods.Prober
	podnet     string                // the command that runs CNI on a VM (cni.Build)
	boot       string                // the program every process of a VM starts under (vm.BuildBoot)
	stemcell   stemcell.Stemcell     // the lane's stemcell line, with its sysctls
	kernel     stemcell.Kernel       // while set (AddWorkerOn), what new VMs boot instead of the stemcell's kernel
	pods       map[string][]*cni.Pod // by worker name
	launched   chan error            // the deploy that LaunchWorker started
	adopted    bool                  // a Kubo deployment has been switched to flannel-dns (Adopt)
	upgraded   bool                  // a deployment of the Previous release has been switched to the dev release (Upgrade)
	// Rolling, when set, runs each instance's update in a roll (update) and may act around it.
	Rolling func(instance string, update func() error) error
}

// Deployed is what one deploy did.
type Deployed struct {
	Release *director.Plan
	Kubo    *director.Plan
}

// New builds the deployment from the manifest and creates the network; nothing is deployed yet.
func New(cfg Config) (*Cluster, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	if err := network.SweepLeftovers(); err != nil {
		return nil, err
	}
	if err := vm.SweepLeftovers(); err != nil {
		return nil, err
	}
	c := &Cluster{cfg: cfg, masters: map[int]*master.Member{}, workers: map[int]*worker.Worker{},
		agents: map[string]*agent.Agent{}, ids: map[string]string{}, applied: map[string]director.Rendered{}, Prober: pods.NewProber(20 * time.Millisecond),
		pods:   map[string][]*cni.Pod{},
		nextIP: map[string]netip.Addr{"master": firstMaster, "worker": netip.MustParseAddr("192.0.2.100")}}
	var err error
	if c.packages, err = cfg.packages(); err != nil {
		return nil, err
	}
	if err := c.loadDeployments(); err != nil {
		return nil, err
	}
	if c.packages["bpm"], err = vmBPM(cfg.Repo, cfg.WorkDir, c.packages["bpm"]); err != nil {
		return nil, err
	}
	if c.podnet, err = cni.Build(cfg.Repo, cfg.WorkDir); err != nil {
		return nil, err
	}
	if c.boot, err = vm.BuildBoot(cfg.Repo, cfg.WorkDir); err != nil {
		return nil, err
	}
	if c.stemcell, err = stemcell.Load(cfg.Cache, cfg.Lane.Stemcell); err != nil {
		return nil, err
	}
	c.net, err = network.New(network.Prefix(), gateway)
	return c, err
}

// check names a real part that is not where the config says, before anything is created.
func (cfg Config) check() error {
	wanted := map[string]string{
		"etcd package (Cache, build-etcd-3.3)":       filepath.Join(cfg.etcdPackage(), "bin", "etcd"),
		"flanneld package (Packages)":                filepath.Join(cfg.Packages, "flannel", "bin", "flanneld"),
		"launcher package (Packages)":                filepath.Join(cfg.Packages, "flannel-launcher", "bin", "flannel-launcher"),
		"bosh CLI (Cache, scripts/build-bosh-cli)":   cfg.bosh(),
		"bpm package (Cache, build-thirdparty)":      filepath.Join(cfg.bpmRelease(), "compiled", "bpm", "bin", "bpm"),
		"bosh-dns package (Cache, build-thirdparty)": filepath.Join(cfg.boshDNSRelease(), "compiled", "bosh-dns", "bin", "bosh-dns"),
		"CNI plugins (Cache, scripts/build-cni*)":    filepath.Join(cfg.cniPackage(), "bin", "flannel"),
		"stemcell's monit (Cache, build-monit)":      filepath.Join(cfg.monit(), "bin", "monit"),
		"flanneld job (Repo)":                        filepath.Join(cfg.Repo, "jobs", "flanneld", "spec"),
		"kubo's jobs (Cache, build-thirdparty)":      filepath.Join(cfg.releases()["kubo"].Jobs, "flanneld", "spec"),
		"the director's template code (Cache)":       filepath.Join(cfg.directorLib(), "bosh", "common", "template", "evaluation_context.rb"),
		"CFCR manifest (Lane)":                       cfg.fixture(),
	}
	if cfg.Previous != nil {
		wanted["previous release's jobs (build-upgrade-releases)"] = filepath.Join(cfg.Previous.Jobs, "flanneld", "spec")
		wanted["previous release's launcher (build-upgrade-releases)"] = filepath.Join(cfg.Previous.Packages["flannel-launcher"], "bin", "flannel-launcher")
	}
	if cfg.Kubo != nil {
		wanted["flannel v0.12.0 (Cache, build-flannel-v0.12)"] = filepath.Join(cfg.kuboFlanneld(), "flanneld")
	}
	for what, path := range wanted {
		if _, err := os.Stat(path); err != nil {
			return bosherr.Errorf("No %s at '%s'", what, path)
		}
	}
	return nil
}

// Destroy stops every process and removes every namespace, mount and cgroup; it is safe to call on a
// half-built cluster.
func (c *Cluster) Destroy() error {
	if c == nil {
		return nil
	}
	c.Prober.Stop() // its sockets hold the pods' namespaces; the sandboxes die with their VMs
	var errs []error
	for name, a := range c.agents {
		a.Halt()
		if err := a.VM.Destroy(); err != nil {
			errs = append(errs, err)
		}
		delete(c.agents, name)
	}
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

// Members lists the masters, by index.
func (c *Cluster) Members() []*master.Member {
	var ms []*master.Member
	for _, i := range c.Masters() {
		ms = append(ms, c.masters[i])
	}
	return ms
}

// Master is master idx.
func (c *Cluster) Master(idx int) *master.Member { return c.masters[idx] }

// AnyMaster is the lowest-index master, to run etcdctl on.
func (c *Cluster) AnyMaster() *master.Member { return c.masters[c.Masters()[0]] }

// Agent is the agent of the instance called name (group/index), nil if there is none.
func (c *Cluster) Agent(name string) *agent.Agent { return c.agents[name] }

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

func instanceName(group string, index int) string { return fmt.Sprintf("%s/%d", group, index) }
