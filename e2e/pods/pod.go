// Package pods puts a "pod" on a worker: a namespace with an address in the worker's flannel subnet,
// joined to the worker by a veth pair, and probes every other pod continuously over UDP.
package pods

import (
	"net/netip"
	"os/exec"
	"strings"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"

	"github.com/flannel-dns/flannel-dns/e2e/network"
)

// Pod is a namespace with one address in a worker's flannel subnet.
type Pod struct {
	Namespace string
	Address   netip.Addr
}

// Create makes a pod for the worker in namespace workerNS whose flannel subnet.env gave gateway
// (FLANNEL_SUBNET, e.g. 198.18.7.1/24): the worker's end of the veth takes the gateway, the pod the next address.
func Create(namespace, workerNS string, gateway netip.Prefix) (*Pod, error) {
	pod := &Pod{Namespace: namespace, Address: gateway.Addr().Next()}
	steps := [][]string{
		{"ip", "netns", "add", namespace},
		{"ip", "-n", namespace, "link", "set", "lo", "up"},
	}
	if err := run(steps); err != nil {
		_ = network.RemoveNamespace(namespace)
		return nil, bosherr.WrapErrorf(err, "Creating pod %s", namespace)
	}
	if err := pod.Attach(workerNS, gateway); err != nil {
		_ = network.RemoveNamespace(namespace)
		return nil, err
	}
	return pod, nil
}

// Attach joins the pod to the worker in workerNS by a veth pair, as Create does; after the worker's VM was
// recreated, it joins the pod (address and all) to the new one.
func (p *Pod) Attach(workerNS string, gateway netip.Prefix) error {
	podCIDR := netip.PrefixFrom(p.Address, gateway.Bits()).String()
	steps := [][]string{
		{"ip", "-n", workerNS, "link", "add", "pod0", "type", "veth", "peer", "name", "eth0", "netns", p.Namespace},
		{"ip", "-n", workerNS, "addr", "add", gateway.String(), "dev", "pod0"},
		{"ip", "-n", workerNS, "link", "set", "pod0", "up"},
		{"ip", "-n", p.Namespace, "addr", "add", podCIDR, "dev", "eth0"},
		{"ip", "-n", p.Namespace, "link", "set", "eth0", "up"},
		{"ip", "-n", p.Namespace, "route", "add", "default", "via", gateway.Addr().String()},
		{"ip", "netns", "exec", workerNS, "sysctl", "-qw", "net.ipv4.ip_forward=1"},
	}
	if err := run(steps); err != nil {
		return bosherr.WrapErrorf(err, "Attaching pod %s to %s", p.Namespace, workerNS)
	}
	return nil
}

func run(steps [][]string) error {
	for _, args := range steps {
		if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			return bosherr.WrapErrorf(err, "%s: %s", strings.Join(args, " "), strings.TrimSpace(string(out)))
		}
	}
	return nil
}

// Remove deletes the pod's namespace (and so its veth pair).
func (p *Pod) Remove() error { return network.RemoveNamespace(p.Namespace) }
