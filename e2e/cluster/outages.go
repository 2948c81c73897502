package cluster

// What the outage suite (e2e/outages) does to a running cluster, and what it reads back from the workers.

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"

	"github.com/flannel-dns/flannel-dns/e2e/boshdns"
	"github.com/flannel-dns/flannel-dns/e2e/master"
	"github.com/flannel-dns/flannel-dns/e2e/network"
	"github.com/flannel-dns/flannel-dns/e2e/worker"
)

const (
	// Alias is the bosh-dns name of every etcd member that the launcher resolves (the job's etcd.alias).
	Alias = "etcd." + Domain
	// LauncherLog is where the launcher and its flanneld child write, on a worker.
	LauncherLog = "/var/vcap/sys/log/flanneld/flanneld.log"
	// LauncherConfig is the launcher's rendered config, on a worker.
	LauncherConfig = "/var/vcap/jobs/flanneld/config/flannel-launcher.json"
	checkScript    = "/var/vcap/jobs/flanneld/bin/flannel-check"
	// blackHoleTable holds the rule that drops etcd client traffic on a master.
	blackHoleTable = "e2e_outage"
)

// ConfigFromEnv is the configuration of an e2e suite (a directory under e2e/): the etcd binaries and the
// compiled packages from E2E_ETCD_BIN and E2E_PACKAGES, as scripts/test-e2e sets them, and the jobs of this
// checkout. unset names the variables that are empty ("" when none is).
func ConfigFromEnv(workDir string, logf func(format string, args ...any)) (cfg Config, unset string) {
	cfg = Config{WorkDir: workDir, EtcdBin: os.Getenv("E2E_ETCD_BIN"), Packages: os.Getenv("E2E_PACKAGES"),
		ReleaseJobs: filepath.Join("..", "..", "jobs"), KuboJobs: filepath.Join("..", "fixtures", "kubo", "jobs"), Logf: logf}
	var missing []string
	for name, value := range map[string]string{"E2E_ETCD_BIN": cfg.EtcdBin, "E2E_PACKAGES": cfg.Packages} {
		if value == "" {
			missing = append(missing, name)
		}
	}
	sort.Strings(missing)
	return cfg, strings.Join(missing, " and ")
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
		state := WorkerState{LauncherPID: w.PID(LauncherProcess), FlanneldPID: w.ChildPID(LauncherProcess),
			Subnet: env["FLANNEL_SUBNET"]}
		if subnet, err := netip.ParsePrefix(state.Subnet); err == nil {
			key := strings.Replace(subnet.Masked().String(), "/", "-", 1)
			state.LeaseInEtcd = strings.Contains(leases, "/subnets/"+key+"\n")
		}
		states[w.Name] = state
	}
	return states, nil
}

// Master is master idx.
func (c *Cluster) Master(idx int) *master.Member { return c.masters[idx] }

// HaltEtcd stops etcd on the masters at indexes, keeping their data.
func (c *Cluster) HaltEtcd(indexes ...int) {
	for _, idx := range indexes {
		c.Logf("halting etcd on master/%d", idx)
		c.masters[idx].Halt()
	}
}

// ResumeEtcd starts etcd again on the masters at indexes, on their data, and waits until every master is healthy.
func (c *Cluster) ResumeEtcd(indexes ...int) error {
	var members []*master.Member
	for _, idx := range c.Masters() {
		members = append(members, c.masters[idx])
	}
	for _, idx := range indexes {
		c.Logf("resuming etcd on master/%d", idx)
		if err := c.masters[idx].Resume(members); err != nil {
			return err
		}
	}
	for _, m := range members {
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

// StopDNS stops the DNS server (bosh-dns here) outright.
func (c *Cluster) StopDNS() {
	c.Logf("stopping the DNS server")
	c.dns.Stop()
}

// ResumeDNS starts the DNS server again with the records it had.
func (c *Cluster) ResumeDNS() error {
	c.Logf("starting the DNS server again")
	return c.dns.Resume()
}

// SpoofDNS adds addr to the answers for names, on top of the records of the deployment as it is.
func (c *Cluster) SpoofDNS(addr netip.Addr, names ...string) error {
	recs, err := boshdns.Records(c.plan, NetworkName, Deployment)
	if err != nil {
		return err
	}
	for _, name := range names {
		if _, ok := recs[name]; !ok {
			return bosherr.Errorf("No record '%s' to add a spoofed address to", name)
		}
		recs[name] = append(recs[name], addr.String())
	}
	c.Logf("spoofing DNS: %s also answers %s", strings.Join(names, ", "), addr)
	return c.dns.Set(recs)
}

// RestoreDNS sets the records of the deployment as it is again, as the next sync_dns would.
func (c *Cluster) RestoreDNS() error {
	recs, err := boshdns.Records(c.plan, NetworkName, Deployment)
	if err != nil {
		return err
	}
	return c.dns.Set(recs)
}

// AddStranger attaches a host to the network that is no instance of the deployment (an impostor).
// RemoveStranger, or Destroy, removes it.
func (c *Cluster) AddStranger(name string, addr netip.Addr) (*network.Host, error) {
	return c.net.AddHost(name, addr)
}

// RemoveStranger removes a host that AddStranger attached, with every process in it.
func (c *Cluster) RemoveStranger(name string) error { return c.net.RemoveHost(name) }

// LaunchWorker creates one more worker and starts its jobs, without waiting for flanneld: AwaitWorker waits.
func (c *Cluster) LaunchWorker() (*worker.Worker, error) {
	w, err := c.PrepareWorker()
	if err != nil {
		return nil, err
	}
	c.Logf("launching %s", w.Name)
	return w, w.Start()
}

// AwaitWorker waits for the subnet of a worker that LaunchWorker started, puts a pod there, and waits
// until every other worker routes to it.
func (c *Cluster) AwaitWorker(w *worker.Worker) error {
	if err := c.addPod(w); err != nil {
		return err
	}
	return c.waitForRoutes(w)
}

// AwaitFlanneld waits until flanneld runs under w's launcher and has written its subnet file after since
// (a restarted worker finds the file of its previous run in place).
func (c *Cluster) AwaitFlanneld(w *worker.Worker, since time.Time) error {
	deadline := time.Now().Add(startTimeout)
	launcher := w.PID(LauncherProcess)
	for {
		info, err := os.Stat(w.Path(SubnetFile))
		if err == nil && info.ModTime().After(since) && w.ChildPID(LauncherProcess) != 0 {
			return nil
		}
		if !Running(launcher) {
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

// Running says whether the process pid is alive: the harness reaps what it started, so one that exited is gone.
func Running(pid int) bool {
	return pid != 0 && syscall.Kill(pid, 0) == nil
}
