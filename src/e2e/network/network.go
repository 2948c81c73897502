// Package network builds the simulated BOSH network: one namespace holding a bridge (the "switch"),
// and one namespace per VM joined to it by a veth pair. Nothing is created in the host's namespace.
package network

import (
	"fmt"
	"net/netip"
	"os/exec"
	"strings"
	"sync"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
)

const (
	bridgeName = "br0"
	// A bridge without an address of its own takes the lowest of its ports' and changes it when that port
	// leaves; the VMs' ARP entries for the gateway (also the DNS server) would then point nowhere for about
	// half a minute after a VM is deleted. A fixed, locally administered address keeps it.
	bridgeMAC = "02:00:c0:00:02:01"
)

// Network is the switch namespace and the VM namespaces attached to it.
type Network struct {
	prefix  string
	gateway netip.Prefix

	mu  sync.Mutex
	vms map[string]*Host
	// veth ends in the switch namespace are named by a counter: interface names are limited to 15 bytes.
	next int
}

// Host is a namespace attached to the switch.
type Host struct {
	Name      string
	Namespace string
	Address   netip.Addr
	port      string
}

// New creates the switch namespace with a bridge that holds gateway (e.g. 192.0.2.1/24).
func New(prefix string, gateway netip.Prefix) (*Network, error) {
	n := &Network{prefix: prefix, gateway: gateway, vms: map[string]*Host{}}
	ns := n.SwitchNamespace()
	steps := [][]string{
		{"netns", "add", ns},
		{"-n", ns, "link", "set", "lo", "up"},
		{"-n", ns, "link", "add", bridgeName, "address", bridgeMAC, "type", "bridge"},
		{"-n", ns, "addr", "add", gateway.String(), "dev", bridgeName},
		{"-n", ns, "link", "set", bridgeName, "up"},
	}
	if err := runAll(steps); err != nil {
		_ = n.Destroy()
		return nil, bosherr.WrapErrorf(err, "Creating switch namespace %s", ns)
	}
	return n, nil
}

// SwitchNamespace names the namespace that holds the bridge (and the DNS server).
func (n *Network) SwitchNamespace() string { return n.prefix + "-switch" }

// Gateway is the bridge's address: the VMs' default route and DNS server.
func (n *Network) Gateway() netip.Addr { return n.gateway.Addr() }

// AddHost creates a VM namespace named name with addr on eth0 and a default route via the bridge.
func (n *Network) AddHost(name string, addr netip.Addr) (*Host, error) {
	n.mu.Lock()
	n.next++
	h := &Host{Name: name, Namespace: n.prefix + "-" + name, Address: addr, port: fmt.Sprintf("p%d", n.next)}
	n.vms[name] = h
	n.mu.Unlock()

	sw := n.SwitchNamespace()
	cidr := fmt.Sprintf("%s/%d", addr, n.gateway.Bits())
	steps := [][]string{
		{"netns", "add", h.Namespace},
		// IPv6 off, as a stemcell has it unless the VM has an IPv6 network. (With ::1 on lo, bosh-dns's start
		// script, `ip addr show dev lo | grep -q ...` under pipefail, now and then died of SIGPIPE.)
		{"netns", "exec", h.Namespace, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1"},
		{"-n", h.Namespace, "link", "set", "lo", "up"},
		{"-n", sw, "link", "add", h.port, "type", "veth", "peer", "name", "eth0", "netns", h.Namespace},
		{"-n", sw, "link", "set", h.port, "master", bridgeName},
		{"-n", sw, "link", "set", h.port, "up"},
		{"-n", h.Namespace, "addr", "add", cidr, "dev", "eth0"},
		{"-n", h.Namespace, "link", "set", "eth0", "up"},
		{"-n", h.Namespace, "route", "add", "default", "via", n.gateway.Addr().String()},
	}
	if err := runAll(steps); err != nil {
		_ = n.RemoveHost(name)
		return nil, bosherr.WrapErrorf(err, "Creating VM %s (%s)", name, addr)
	}
	return h, nil
}

// RemoveHost kills every process left in the VM's namespace and deletes it with its veth pair.
func (n *Network) RemoveHost(name string) error {
	n.mu.Lock()
	h, ok := n.vms[name]
	delete(n.vms, name)
	n.mu.Unlock()
	if !ok {
		return nil
	}
	return RemoveNamespace(h.Namespace)
}

// Hosts lists the VMs attached now.
func (n *Network) Hosts() []*Host {
	n.mu.Lock()
	defer n.mu.Unlock()
	hosts := make([]*Host, 0, len(n.vms))
	for _, h := range n.vms {
		hosts = append(hosts, h)
	}
	return hosts
}

// Destroy removes every VM namespace and the switch namespace, and reports every failure.
func (n *Network) Destroy() error {
	var problems []string
	for _, h := range n.Hosts() {
		if err := n.RemoveHost(h.Name); err != nil {
			problems = append(problems, err.Error())
		}
	}
	if err := RemoveNamespace(n.SwitchNamespace()); err != nil {
		problems = append(problems, err.Error())
	}
	if len(problems) > 0 {
		return bosherr.Errorf("Destroying network: %s", strings.Join(problems, "; "))
	}
	return nil
}

func runAll(steps [][]string) error {
	for _, args := range steps {
		if err := ip(args...); err != nil {
			return err
		}
	}
	return nil
}

func ip(args ...string) error {
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		return bosherr.WrapErrorf(err, "ip %s: %s", strings.Join(args, " "), strings.TrimSpace(string(out)))
	}
	return nil
}
