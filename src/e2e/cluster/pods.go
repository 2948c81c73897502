package cluster

// The pods: made on the workers through CNI as kubelet makes them (package cni), probed among each other.

import (
	"fmt"
	"net/netip"
	"regexp"
	"strings"
	"time"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"

	"github.com/flannel-dns/flannel-dns/src/e2e/cni"
	"github.com/flannel-dns/flannel-dns/src/e2e/director"
	"github.com/flannel-dns/flannel-dns/src/e2e/pods"
	"github.com/flannel-dns/flannel-dns/src/e2e/worker"
)

// PodsPerWorker is how many pods every worker gets, all in the probe.
const PodsPerWorker = 2

// Runtime is w's container runtime: it makes and deletes pods through the CNI network of the VM's
// /etc/cni/net.d, with the plugins where w's kubelet finds them: its --cni-bin-dir, which the agent fills
// with kubelet's cni package.
func (c *Cluster) Runtime(w *worker.Worker) (*cni.Runtime, error) {
	name := instanceName("worker", w.Index)
	var rendered director.Rendered
	ok := c.plan != nil
	if ok {
		rendered, ok = c.plan.Of(name)
	}
	if !ok {
		return nil, bosherr.Errorf("No plan for %s", name)
	}
	for _, job := range rendered.Jobs {
		if job.Name != "kubelet" {
			continue
		}
		dir := cniBinDir.FindSubmatch(job.Files["bin/kubelet_ctl"])
		if dir == nil {
			return nil, bosherr.Errorf("kubelet's bin/kubelet_ctl on %s passes no --cni-bin-dir", name)
		}
		return &cni.Runtime{VM: w.VM, Podnet: c.podnet, BinDir: string(dir[1])}, nil
	}
	return nil, bosherr.Errorf("No kubelet job on %s", name)
}

// cniBinDir is kubelet's flag in its control script: kubo v0.21 writes it there, v0.32 renders it from the
// manifest's k8s-args.
var cniBinDir = regexp.MustCompile(`--cni-bin-dir=(\S+)`)

// Pods are the probed pods on w.
func (c *Cluster) Pods(w *worker.Worker) []*cni.Pod { return c.pods[w.Name] }

// addPods waits for w's flanneld subnet, then makes its pods and adds them to the probe.
func (c *Cluster) addPods(w *worker.Worker) error {
	if _, err := c.waitForSubnet(w); err != nil {
		return err
	}
	rt, err := c.Runtime(w)
	if err != nil {
		return err
	}
	for i := len(c.pods[w.Name]); i < PodsPerWorker; i++ {
		pod, err := rt.Add(fmt.Sprintf("%s-pod-%d", w.Name, i))
		if err != nil {
			return err
		}
		c.pods[w.Name] = append(c.pods[w.Name], pod)
		if err := c.Prober.Add(&pod.Pod); err != nil {
			return err
		}
	}
	return nil
}

// forgetPods takes w's pods out of the probe and the cluster, without telling the VM.
func (c *Cluster) forgetPods(w *worker.Worker) []*cni.Pod {
	gone := c.pods[w.Name]
	for _, p := range gone {
		c.Prober.Remove(p.Address)
	}
	delete(c.pods, w.Name)
	return gone
}

// RestartPods is kubelet making w's pods again (after a reboot, where their sandboxes died, or after docker
// restarted): each is deleted through CNI, releasing its address, and made anew.
func (c *Cluster) RestartPods(w *worker.Worker) error {
	rt, err := c.Runtime(w)
	if err != nil {
		return err
	}
	for _, p := range c.forgetPods(w) {
		if err := rt.Del(p); err != nil {
			return err
		}
	}
	return c.addPods(w)
}

// Witness probes between new pods (made through CNI like the others) on the given workers only, so that
// loss among untouched workers can be counted while another worker's pods are expected to lose traffic.
// stop ends the probe and deletes those pods.
func (c *Cluster) Witness(workers ...*worker.Worker) (prober *pods.Prober, stop func() error, err error) {
	prober = pods.NewProber(20 * time.Millisecond)
	type made struct {
		rt  *cni.Runtime
		pod *cni.Pod
	}
	var witnesses []made
	stop = func() error {
		prober.Stop()
		var errs []error
		for _, m := range witnesses {
			if err := m.rt.Del(m.pod); err != nil {
				errs = append(errs, err)
			}
		}
		if len(errs) > 0 {
			return bosherr.Errorf("Deleting the witness pods: %v", errs)
		}
		return nil
	}
	for _, w := range workers {
		rt, err := c.Runtime(w)
		var pod *cni.Pod
		if err == nil {
			pod, err = rt.Add(w.Name + "-witness")
		}
		if err == nil {
			witnesses = append(witnesses, made{rt, pod})
			err = prober.Add(&pod.Pod)
		}
		if err != nil {
			_ = stop()
			return nil, nil, err
		}
	}
	return prober, stop, nil
}

// WorkerNamed is the worker of the instance called name (worker/N), nil for any other instance.
func (c *Cluster) WorkerNamed(name string) *worker.Worker {
	for idx, w := range c.workers {
		if instanceName("worker", idx) == name {
			return w
		}
	}
	return nil
}

// PodOwners tells, from the subnets the workers hold now, which worker's subnet holds a pod's address: its
// instance name, "" for none.
func (c *Cluster) PodOwners() func(netip.Addr) string {
	subnets := map[string]netip.Prefix{}
	for name, subnet := range c.NodeSubnets() {
		if prefix, err := netip.ParsePrefix(subnet); err == nil && strings.HasPrefix(name, "worker/") {
			subnets[name] = prefix.Masked()
		}
	}
	return func(addr netip.Addr) string {
		for name, prefix := range subnets {
			if prefix.Contains(addr) {
				return name
			}
		}
		return ""
	}
}
