// Package vtep keeps a node's VXLAN endpoint address (its flannel.<VNI> device's MAC) across a VM that lost the
// device: recreated, or rebooted. Every other node sends this node's pod traffic to the MAC in this node's lease;
// flanneld gives a device it creates a new MAC and announces it in its lease, but nodes still on kubo's flanneld
// while a cluster adopts flannel-dns read only etcd's v2 store and never learn it: all traffic from them would be
// dropped. So, before flanneld starts, when the device is missing and v3 holds a lease for this node's address that
// names a VtepMAC, the launcher creates the device with that MAC and the attributes flanneld gives it; flanneld finds
// it compatible and keeps it.
//
//	missing, err := vtep.Missing(cfg.Network)                     // nothing to do when flannel.<VNI> exists
//	node, err := vtep.Local(cfg.Flanneld)                         // the interface and addresses flanneld uses
//	mac, key, err := vtep.LeaseMAC(ctx, kv, cfg.Etcd.Prefix, node) // from this node's lease in v3, nil if none
//	created, err := vtep.Ensure(node, cfg.Network, mac)            // creates flannel.<VNI> if it is missing
package vtep

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strings"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
	"github.com/vishvananda/netlink"
	clientv3 "go.etcd.io/etcd/client/v3"
	"golang.org/x/sys/unix"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/config"
)

// Node is the external interface flanneld uses and the node's addresses, found as flanneld finds them.
type Node struct {
	Link     netlink.Link
	Addr     net.IP // the VXLAN source address
	PublicIP net.IP // flanneld.public_ip, or Addr: what the node's lease names
}

// Local finds the interface and the addresses flanneld will use, by flanneld's own rules (flannel 0.28, IPv4):
// flanneld.iface, or flanneld.public_ip when iface is not set, as an address names the interface that has it
// and is the VXLAN source address; as a name, or with neither set the default route's interface, the interface's
// preferred address is (preferredAddr). The lease names flanneld.public_ip, or that source address.
func Local(f config.Flanneld) (Node, error) {
	link, addr, err := external(f)
	if err != nil {
		return Node{}, err
	}
	node := Node{Link: link, Addr: addr, PublicIP: addr}
	if f.PublicIP != "" {
		node.PublicIP = net.ParseIP(f.PublicIP)
	}
	return node, nil
}

// external is the interface and the source address.
func external(f config.Flanneld) (netlink.Link, net.IP, error) {
	if ip := net.ParseIP(f.Iface); ip != nil {
		link, err := linkWithAddress(ip, "flanneld.iface")
		return link, ip, err
	}
	if f.Iface == "" && f.PublicIP != "" {
		ip := net.ParseIP(f.PublicIP)
		link, err := linkWithAddress(ip, "flanneld.public_ip, with flanneld.iface not set")
		return link, ip, err
	}
	link, err := namedOrDefault(f.Iface)
	if err != nil {
		return nil, nil, err
	}
	addr, err := preferredAddr(link)
	return link, addr, err
}

func namedOrDefault(iface string) (netlink.Link, error) {
	if iface != "" {
		link, err := netlink.LinkByName(iface)
		if err != nil {
			return nil, bosherr.WrapErrorf(err, "Finding interface '%s'", iface)
		}
		return link, nil
	}
	routes, err := netlink.RouteList(nil, netlink.FAMILY_V4)
	if err != nil {
		return nil, bosherr.WrapError(err, "Listing routes")
	}
	for _, r := range routes {
		if r.Dst == nil || r.Dst.String() == "0.0.0.0/0" {
			return linkByIndex(r.LinkIndex)
		}
	}
	return nil, bosherr.Error("No default route, and flanneld.iface is not set")
}

// linkWithAddress is the interface that has ip among its IPv4 addresses; key names the setting that gave ip.
func linkWithAddress(ip net.IP, key string) (netlink.Link, error) {
	addrs, err := netlink.AddrList(nil, netlink.FAMILY_V4)
	if err != nil {
		return nil, bosherr.WrapError(err, "Listing addresses")
	}
	for _, a := range addrs {
		if a.IP.Equal(ip) {
			return linkByIndex(a.LinkIndex)
		}
	}
	return nil, bosherr.Errorf("No interface has the address %s (%s)", ip, key)
}

// preferredAddr is the IPv4 address flanneld takes from an interface: of the global and link-local ones that are
// not deprecated, the first in the kernel's order of those that rank best. Ranked in turn: global before
// link-local, permanent before one with a lifetime (DHCP's), not temporary before temporary (for IPv4 the same
// flag marks a secondary address).
func preferredAddr(link netlink.Link) (net.IP, error) {
	addrs, err := netlink.AddrList(link, netlink.FAMILY_V4)
	if err != nil {
		return nil, bosherr.WrapErrorf(err, "Listing the addresses of '%s'", link.Attrs().Name)
	}
	var best net.IP
	bestRank := 0
	for _, a := range addrs {
		if !(a.IP.IsGlobalUnicast() || a.IP.IsLinkLocalUnicast()) || a.Flags&unix.IFA_F_DEPRECATED != 0 {
			continue
		}
		if r := rank(a); best == nil || r < bestRank {
			best, bestRank = a.IP, r
		}
	}
	if best == nil {
		return nil, bosherr.Errorf("Interface '%s' has no IPv4 address flanneld would use (global or link-local, "+
			"not deprecated)", link.Attrs().Name)
	}
	return best, nil
}

// rank orders addresses by flanneld's preferences, the most important one the highest bit: lower is better.
func rank(a netlink.Addr) int {
	r := 0
	if a.IP.IsLinkLocalUnicast() {
		r |= 4
	}
	if a.Flags&unix.IFA_F_PERMANENT == 0 {
		r |= 2
	}
	if a.Flags&unix.IFA_F_TEMPORARY != 0 {
		r |= 1
	}
	return r
}

func linkByIndex(index int) (netlink.Link, error) {
	link, err := netlink.LinkByIndex(index)
	if err != nil {
		return nil, bosherr.WrapErrorf(err, "Finding interface %d", index)
	}
	return link, nil
}

// LeaseMAC is the VtepMAC of the first vxlan lease in v3 (by key) that names node's public address, with the
// lease's key; nil when there is none. Like the network config's read, it needs no leader: a start during an
// election or a quorum loss gets it at once.
func LeaseMAC(ctx context.Context, kv clientv3.KV, prefix string, node Node) (net.HardwareAddr, string, error) {
	// Serializable: the member asked answers from what it holds. The lease sought was written before this start,
	// and a herd of launchers (a deployment back after a power cut) would otherwise queue every one of these
	// reads behind the leader's read index (docs/benchmarks.md, Scale).
	resp, err := kv.Get(ctx, strings.TrimSuffix(prefix, "/")+"/subnets/", clientv3.WithPrefix(), clientv3.WithSerializable())
	if err != nil {
		return nil, "", bosherr.WrapError(err, "Reading the leases")
	}
	for _, kv := range resp.Kvs {
		var attrs struct {
			PublicIP    string
			BackendType string
			BackendData struct{ VtepMAC string }
		}
		if json.Unmarshal(kv.Value, &attrs) != nil || attrs.BackendType != "vxlan" || !net.ParseIP(attrs.PublicIP).Equal(node.PublicIP) {
			continue
		}
		mac, err := net.ParseMAC(attrs.BackendData.VtepMAC)
		if err != nil {
			return nil, "", bosherr.WrapErrorf(err, "The lease at '%s' names no VtepMAC", kv.Key)
		}
		return mac, string(kv.Key), nil
	}
	return nil, "", nil
}

// Name is flanneld's name for the vxlan device of a VNI (flannel's default VNI is 1).
func Name(network config.Network) string {
	return fmt.Sprintf("flannel.%d", vni(network))
}

func vni(network config.Network) int {
	if network.VNI == 0 {
		return 1
	}
	return network.VNI
}

// Missing tells whether flanneld's vxlan device does not exist, so that a VM that kept it (a job restart, an
// update) reads no lease.
func Missing(network config.Network) (bool, error) {
	name := Name(network)
	_, err := netlink.LinkByName(name)
	if _, notFound := err.(netlink.LinkNotFoundError); notFound {
		return true, nil
	}
	if err != nil {
		return false, bosherr.WrapErrorf(err, "Looking for '%s'", name)
	}
	return false, nil
}

// Ensure creates flanneld's vxlan device with mac when it does not exist, as flanneld would create it (VNI, UDP
// port, source address and device, no learning, MTU 50 below the interface's), and leaves it down: flanneld
// configures and raises it. An existing device is left alone, whatever its MAC. It tells whether it created one.
func Ensure(node Node, network config.Network, mac net.HardwareAddr) (bool, error) {
	if missing, err := Missing(network); !missing {
		return false, err
	}
	name := Name(network)
	device := &netlink.Vxlan{
		LinkAttrs:    netlink.LinkAttrs{Name: name, HardwareAddr: mac, MTU: node.Link.Attrs().MTU - 50},
		VxlanId:      vni(network),
		VtepDevIndex: node.Link.Attrs().Index,
		SrcAddr:      node.Addr,
		Port:         network.Port, // 0: the kernel's default, 8472, as flanneld leaves it
		Learning:     false,
	}
	if err := netlink.LinkAdd(device); err != nil {
		return false, bosherr.WrapErrorf(err, "Creating '%s' with MAC %s", name, mac)
	}
	return true, nil
}
