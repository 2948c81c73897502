package cluster

// A deployment that starts as a CFCR cluster runs before it adopts flannel-dns, for the adoption rehearsal
// (src/e2e/adoption): the upstream manifest without this release's ops-files, kubo-release's own flanneld and
// kubo-dns-aliases jobs (flanneld itself is flannel v0.12.0, standing in for kubo's v0.10.0, which the module proxy
// does not serve) on masters and workers, etcd with the v2 API on the masters. Adopt then deploys the manifest with the ops-files on it.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
	"go.yaml.in/yaml/v3"

	"github.com/flannel-dns/flannel-dns/src/e2e/manifest"
	"github.com/flannel-dns/flannel-dns/src/e2e/worker"
)

// Kubo starts the cluster as kubo runs it. Its flanneld is flannel v0.12.0 (scripts/build-flannel-v0.12); its
// etcdctl is the one cfcr-etcd ships, which speaks the v2 API by default, as kubo's 3.0.7 does.
type Kubo struct {
	// OpsFiles are applied after the simulated cluster's own, before and after adopting.
	OpsFiles []string
}

func (cfg Config) kuboFlanneld() string { return filepath.Join(cfg.Cache, "flannel-0.12.0") }
func (cfg Config) kuboEtcdctl() string  { return filepath.Join(cfg.etcdPackage(), "bin") }

// kuboOpsFiles are the simulated cluster's ops-files for a cluster as kubo runs it, then the rehearsal's own.
func (cfg Config) kuboOpsFiles() ([]string, error) {
	certificate, err := cfg.kuboCertificate()
	if err != nil {
		return nil, err
	}
	return append([]string{cfg.simulated(), certificate}, cfg.Kubo.OpsFiles...), nil
}

// kuboCertificate writes an ops-file that makes etcd's server certificate, before adopting, do here what it
// does on a kubo cluster. It has a CN and no alternative names there, and kubo's etcd (built with Go 1.10) and
// etcdctl took the CN as the name; with no alternative names, etcd 3.3 checks no peer's address either. The
// etcd and etcdctl here are built with a Go that ignores the CN, so the certificate gets the CN's wildcard as
// an alternative name, and, so that etcd's peer check passes for every master as it is skipped there, every
// address a master can have here.
func (cfg Config) kuboCertificate() (string, error) {
	names := []string{"'*.etcd.cfcr.internal'"}
	for addr := firstMaster; addr.Compare(lastMaster) <= 0; addr = addr.Next() {
		names = append(names, addr.String())
	}
	ops := fmt.Sprintf("- type: replace\n  path: /variables/name=%s/options/alternative_names?\n  value: [%s]\n",
		cfg.Lane.EtcdCertificate, strings.Join(names, ", "))
	path := filepath.Join(cfg.WorkDir, "kubo-etcd-certificate.yml")
	return path, os.WriteFile(path, []byte(ops), 0o644)
}

// loadKubo builds the deployment as it runs before adopting, and runs it: kubo's own flanneld and
// kubo-dns-aliases where the manifest places them.
func (c *Cluster) loadKubo(store string) error {
	ops, err := c.cfg.kuboOpsFiles()
	if err != nil {
		return err
	}
	before, err := manifest.Build(c.cfg.source(store, ops...))
	if err != nil {
		return err
	}
	if c.release, err = c.releasesOf(before, c.runs); err != nil {
		return err
	}
	c.kubo, c.update = c.release, before.Update
	return nil
}

// Adopt deploys flannel-dns's ops-files (then extra ones) on a cluster that started as kubo, as the operator's
// `bosh deploy` does. The vars store stands for CredHub, which re-issues etcd's certificate because the companion
// changes its options (update_mode: converge); the bosh CLI never does, so, as the README tells an operator with a
// vars store, its entry is deleted first and generated again, from the same CA.
func (c *Cluster) Adopt(extra ...string) (Changes, error) {
	if c.cfg.Kubo == nil || c.adopted {
		return Changes{}, bosherr.Error("Adopt needs a cluster that started as kubo and has not adopted yet")
	}
	if err := forgetVariable(filepath.Join(c.cfg.WorkDir, "vars-store.yml"), c.cfg.Lane.EtcdCertificate); err != nil {
		return Changes{}, err
	}
	c.adopted = true
	c.extraOps = append(slices.Clone(c.cfg.Kubo.OpsFiles), extra...)
	if err := c.loadDeployments(); err != nil {
		return Changes{}, err
	}
	c.Logf("adopting flannel-dns")
	return c.deploy()
}

// forgetVariable deletes name from a vars store.
func forgetVariable(store, name string) error {
	data, err := os.ReadFile(store)
	if err != nil {
		return bosherr.WrapErrorf(err, "Reading the vars store")
	}
	vars := map[string]any{}
	if err := yaml.Unmarshal(data, &vars); err != nil {
		return bosherr.WrapErrorf(err, "Parsing the vars store")
	}
	if _, ok := vars[name]; !ok {
		return bosherr.Errorf("The vars store has no '%s'", name)
	}
	delete(vars, name)
	if data, err = yaml.Marshal(vars); err != nil {
		return bosherr.WrapErrorf(err, "Writing the vars store")
	}
	return os.WriteFile(store, data, 0o600)
}

// EvictPods deletes w's pods through CNI, as kubelet's drain evicts a worker's pods before its update; their
// probes stop.
func (c *Cluster) EvictPods(w *worker.Worker) error {
	rt, err := c.Runtime(w)
	if err != nil {
		return err
	}
	for _, p := range c.forgetPods(w) {
		if err := rt.Del(p); err != nil {
			return err
		}
	}
	return nil
}

// ReturnPods makes w's pods again through CNI, in the subnet flanneld wrote, as pods are scheduled on a worker
// after its update.
func (c *Cluster) ReturnPods(w *worker.Worker) error { return c.addPods(w) }

// Worker is the worker of index idx, nil if there is none.
func (c *Cluster) Worker(idx int) *worker.Worker { return c.workers[idx] }

// NodeSubnets is FLANNEL_SUBNET of every instance (masters and workers), by instance name; "" where there is none.
func (c *Cluster) NodeSubnets() map[string]string {
	subnets := map[string]string{}
	for _, inst := range c.instances() {
		subnets[inst.Name()] = Subnet(&worker.Worker{VM: c.agents[inst.Name()].VM})
	}
	return subnets
}

// InstanceAddress is the address of the instance called name.
func (c *Cluster) InstanceAddress(name string) string {
	if a := c.agents[name]; a != nil {
		return a.VM.Address.String()
	}
	return ""
}

// LeaseHolders reads flannel's subnet leases from the v3 store and, on a kubo cluster, from the v2 store: the
// node address (PublicIP) of each lease, by subnet key (198.18.7.0-24).
func (c *Cluster) LeaseHolders() (v3, v2 map[string]string, err error) {
	m := c.AnyMaster()
	out, err := m.Etcdctl("get", "--prefix", leasePrefix)
	if err != nil {
		return nil, nil, err
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	v3 = map[string]string{}
	for i := 0; i+1 < len(lines); i += 2 {
		v3[strings.TrimPrefix(lines[i], leasePrefix)] = publicIP(lines[i+1])
	}
	v2 = map[string]string{}
	if c.cfg.Kubo == nil {
		return v3, v2, nil
	}
	values, err := m.V2Values(strings.TrimSuffix(leasePrefix, "/"))
	if err != nil {
		return nil, nil, err
	}
	for key, value := range values {
		v2[strings.TrimPrefix(key, leasePrefix)] = publicIP(value)
	}
	return v3, v2, nil
}

func publicIP(lease string) string {
	var attrs struct{ PublicIP string }
	if err := json.Unmarshal([]byte(lease), &attrs); err != nil {
		return "unreadable: " + lease
	}
	return attrs.PublicIP
}

// AsKubo makes cfg a cluster that starts as kubo runs it; for clustertest.New.
func AsKubo(cfg *Config) string {
	cfg.Kubo = &Kubo{}
	return ""
}
