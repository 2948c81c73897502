package cluster

// What the outage suite (src/e2e/outages) does to a running cluster, and what it reads back from the workers.

import (
	"github.com/flannel-dns/flannel-dns/src/testenv/cache"

	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"

	"github.com/flannel-dns/flannel-dns/src/e2e/agent"
	"github.com/flannel-dns/flannel-dns/src/e2e/director"
	"github.com/flannel-dns/flannel-dns/src/e2e/network"
	"github.com/flannel-dns/flannel-dns/src/e2e/procstats"
	"github.com/flannel-dns/flannel-dns/src/e2e/worker"
)

const (
	// Alias is the bosh-dns name of every etcd member that the launcher resolves (the job's etcd.alias).
	Alias = "etcd." + Domain
	// LauncherLog is where the launcher and its flanneld child write, on a worker (bpm's log of the process).
	LauncherLog = "/var/vcap/sys/log/flanneld/flanneld.stderr.log"
	// LauncherConfig is the launcher's rendered config, on a worker.
	LauncherConfig = "/var/vcap/jobs/flanneld/config/flannel-launcher.json"
	checkScript    = "/var/vcap/jobs/flanneld/bin/flannel-check"
	// blackHoleTable holds the rule that drops etcd client traffic on a master.
	blackHoleTable = "e2e_outage"
)

// ConfigFromEnv is the configuration of an e2e suite (a directory under src/e2e/): the compiled packages from
// E2E_PACKAGES, as scripts/test-e2e sets it, the lane E2E_LANE names (v0.21 by default), the cache of
// FLANNEL_DNS_CACHE and this checkout. unset names what is missing ("" when nothing is).
func ConfigFromEnv(workDir string, logf func(format string, args ...any)) (cfg Config, unset string) {
	repo, _ := filepath.Abs(filepath.Join("..", "..", ".."))
	cfg = Config{WorkDir: workDir, Packages: os.Getenv("E2E_PACKAGES"), Cache: cache.Dir(), Repo: repo, Logf: logf}
	lane, err := LaneFromEnv()
	if err != nil {
		return cfg, err.Error()
	}
	cfg.Lane = lane
	if cfg.Packages == "" {
		return cfg, "E2E_PACKAGES"
	}
	return cfg, ""
}

// WorkerState is what one worker shows: its processes, its subnet, and whether etcd holds its lease.
type WorkerState struct {
	LauncherPID, FlanneldPID int
	Subnet                   string // FLANNEL_SUBNET
	LeaseInEtcd              bool
}

// WorkerStates reads the state of every worker, by name.
func (c *Cluster) WorkerStates() (map[string]WorkerState, error) {
	leases, err := c.Leases()
	if err != nil {
		return nil, err
	}
	states := map[string]WorkerState{}
	for _, w := range c.Workers() {
		env, err := w.SubnetEnv(SubnetFile)
		if err != nil {
			return nil, err
		}
		state := WorkerState{LauncherPID: w.LauncherPID(), FlanneldPID: w.FlanneldPID(),
			Subnet: env["FLANNEL_SUBNET"]}
		if subnet, err := netip.ParsePrefix(state.Subnet); err == nil {
			key := strings.Replace(subnet.Masked().String(), "/", "-", 1)
			state.LeaseInEtcd = strings.Contains(leases, "/subnets/"+key+"\n")
		}
		states[w.Name] = state
	}
	return states, nil
}

// HaltEtcd stops etcd on the masters at indexes (monit stop), keeping their data.
func (c *Cluster) HaltEtcd(indexes ...int) error {
	for _, idx := range indexes {
		c.Logf("halting etcd on master/%d", idx)
		if err := c.masters[idx].Halt(); err != nil {
			return err
		}
	}
	return nil
}

// ResumeEtcd starts etcd again on the masters at indexes (monit start), on their data, and waits until every
// master is healthy.
func (c *Cluster) ResumeEtcd(indexes ...int) error {
	for _, idx := range indexes {
		c.Logf("resuming etcd on master/%d", idx)
		if err := c.masters[idx].Resume(); err != nil {
			return err
		}
	}
	for _, m := range c.Members() {
		if err := m.WaitHealthy(startTimeout); err != nil {
			return err
		}
	}
	return nil
}

// BlackHoleEtcd drops every packet that reaches a master's etcd client port from another host: clients see
// a silent network, while the members keep their quorum over the peer port and etcdctl on a master still works.
func (c *Cluster) BlackHoleEtcd() error {
	rules := fmt.Sprintf("add table inet %[1]s; add chain inet %[1]s input { type filter hook input priority 0; }; "+
		"add rule inet %[1]s input iifname != \"lo\" tcp dport 2379 drop", blackHoleTable)
	for _, idx := range c.Masters() {
		c.Logf("black-holing etcd's client port on master/%d", idx)
		if _, err := c.masters[idx].Run("nft", rules); err != nil {
			return err
		}
	}
	return nil
}

// RestoreEtcd removes what BlackHoleEtcd added; masters without it are left alone.
func (c *Cluster) RestoreEtcd() error {
	for _, idx := range c.Masters() {
		m := c.masters[idx]
		if _, err := m.Run("nft", "list", "table", "inet", blackHoleTable); err != nil {
			continue
		}
		c.Logf("restoring etcd's client port on master/%d", idx)
		if _, err := m.Run("nft", "delete", "table", "inet", blackHoleTable); err != nil {
			return err
		}
	}
	return nil
}

// dnsProcess is bosh-dns's monit process: the DNS server each VM resolves through.
const dnsProcess = "bosh-dns"

// StopDNS stops bosh-dns on every VM (monit stop), so that no name resolves anywhere.
func (c *Cluster) StopDNS() error {
	c.Logf("stopping bosh-dns on every VM")
	return c.eachAgent(func(a *agent.Agent) error { return a.StopProcess(dnsProcess) })
}

// ResumeDNS starts bosh-dns again on every VM (monit start).
func (c *Cluster) ResumeDNS() error {
	c.Logf("starting bosh-dns again on every VM")
	return c.eachAgent(func(a *agent.Agent) error { return a.StartProcess(dnsProcess) })
}

// spoofJob is where SpoofDNS puts its aliases: a job directory whose name sorts before every real job's, so
// that bosh-dns, which keeps the first definition of an alias it reads, takes its version.
const spoofJob = "/var/vcap/jobs/0-spoof"

// SpoofDNS makes bosh-dns on every worker answer addr for names besides what they resolve to: an aliases.json
// that lists addr and the alias's real targets (as a misconfigured or malicious job could ship), then a
// restart of bosh-dns, which reads aliases when it starts.
func (c *Cluster) SpoofDNS(addr netip.Addr, names ...string) error {
	aliases, err := c.aliasTargets()
	if err != nil {
		return err
	}
	spoofed := map[string][]string{}
	for _, name := range names {
		if _, ok := aliases[name]; !ok {
			return bosherr.Errorf("No alias '%s' to add a spoofed address to", name)
		}
		spoofed[name] = append([]string{addr.String()}, aliases[name]...)
	}
	content, err := json.Marshal(spoofed)
	if err != nil {
		return bosherr.WrapError(err, "Writing the spoofed aliases")
	}
	c.Logf("spoofing DNS: %s also answers %s", strings.Join(names, ", "), addr)
	return c.eachWorkerDNS(func(w *worker.Worker) error {
		path := w.Path(spoofJob + "/dns/aliases.json")
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return bosherr.WrapErrorf(err, "Creating %s", filepath.Dir(path))
		}
		if err := os.WriteFile(path, content, 0o644); err != nil {
			return bosherr.WrapErrorf(err, "Writing %s", path)
		}
		return nil
	})
}

// RestoreDNS takes the spoofed aliases away again.
func (c *Cluster) RestoreDNS() error {
	return c.eachWorkerDNS(func(w *worker.Worker) error { return os.RemoveAll(w.Path(spoofJob)) })
}

// eachWorkerDNS changes each worker's files with change, then restarts its bosh-dns.
func (c *Cluster) eachWorkerDNS(change func(*worker.Worker) error) error {
	for _, w := range c.Workers() {
		if err := change(w); err != nil {
			return err
		}
		if err := w.Agent.StopProcess(dnsProcess); err != nil {
			return err
		}
		if err := w.Agent.StartProcess(dnsProcess); err != nil {
			return err
		}
	}
	return nil
}

// aliasTargets are the aliases that cfcr-dns-aliases renders for a worker.
func (c *Cluster) aliasTargets() (map[string][]string, error) {
	for _, r := range c.plan.Rendered {
		for _, job := range r.Jobs {
			if job.Name != "cfcr-dns-aliases" {
				continue
			}
			var aliases map[string][]string
			if err := json.Unmarshal(job.Files["dns/aliases.json"], &aliases); err != nil {
				return nil, bosherr.WrapError(err, "Parsing the aliases of cfcr-dns-aliases")
			}
			return aliases, nil
		}
	}
	return nil, bosherr.Error("No instance renders cfcr-dns-aliases")
}

func (c *Cluster) eachAgent(f func(*agent.Agent) error) error {
	for _, a := range c.agents {
		if err := f(a); err != nil {
			return err
		}
	}
	return nil
}

// AddStranger attaches a host to the network that is no instance of the deployment (an impostor).
// RemoveStranger, or Destroy, removes it.
func (c *Cluster) AddStranger(name string, addr netip.Addr) (*network.Host, error) {
	return c.net.AddHost(name, addr)
}

// RemoveStranger removes a host that AddStranger attached, with every process in it.
func (c *Cluster) RemoveStranger(name string) error { return c.net.RemoveHost(name) }

// LaunchWorker creates one more worker and deploys it in the background, as `bosh deploy` does while the
// caller looks on: AwaitWorker waits for the deploy.
func (c *Cluster) LaunchWorker() (*worker.Worker, error) {
	w, err := c.PrepareWorker()
	if err != nil {
		return nil, err
	}
	c.Logf("launching %s", w.Name)
	c.launched = make(chan error, 1)
	go func(plan *director.Plan) { c.launched <- c.roll(plan) }(c.plan)
	return w, nil
}

// AwaitWorker waits for the deploy of a worker that LaunchWorker started, puts a pod there, and waits until
// every other worker routes to it.
func (c *Cluster) AwaitWorker(w *worker.Worker) error {
	if err := <-c.launched; err != nil {
		return err
	}
	if err := c.addPods(w); err != nil {
		return err
	}
	return c.waitForRoutes(w)
}

// AwaitFlanneld waits until flanneld runs under w's launcher and has written its subnet file after since
// (a restarted worker finds the file of its previous run in place).
func (c *Cluster) AwaitFlanneld(w *worker.Worker, since time.Time) error {
	deadline := time.Now().Add(startTimeout)
	launcher := w.LauncherPID()
	for {
		info, err := os.Stat(w.Path(SubnetFile))
		if err == nil && info.ModTime().After(since) && w.FlanneldPID() != 0 {
			return nil
		}
		if !procstats.Running(launcher) {
			return bosherr.Errorf("The launcher on %s exited before flanneld started; see %s", w.Name, w.Path(LauncherLog))
		}
		if time.Now().After(deadline) {
			return bosherr.Errorf("flanneld did not start on %s within %s; see %s", w.Name, startTimeout, w.Path(LauncherLog))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// Check runs the job's bin/flannel-check on w as an operator would, and returns what it printed (standard
// output, then standard error) and its exit status.
func Check(w *worker.Worker, args ...string) (string, int, error) {
	cmd := w.Command(append([]string{checkScript}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return string(out) + stderr.String(), exit.ExitCode(), nil
	}
	if err != nil {
		return "", 0, bosherr.WrapErrorf(err, "Running %s on %s", checkScript, w.Name)
	}
	return string(out) + stderr.String(), 0, nil
}
