// Package cnibridge keeps the CNI bridge's address in step with the node's flannel subnet.
//
// The bridge plugin gives the bridge the gateway of the subnet that the flannel plugin reads from flanneld's
// subnet file, when the first pod comes, and refuses every later pod if the bridge has another IPv4 address
// ("cni0 already has an IP address different from ..."). When the node gets a new subnet while the bridge
// outlives the old one (its lease expired and another node took the subnet while the job was stopped: kubo-release
// #228), no pod starts again, and the node keeps routing the old subnet, maybe another node's by now, to its
// bridge. Follow puts the new gateway on the bridge and removes every other IPv4 address of the bridge inside the
// pod network: pods left with an address from the old subnet are cut off, as they must be (kubelet makes them
// again when their sandboxes are recreated). An address outside the pod
// network is someone else's (an operator's, another network's) and stays, as flanneld leaves such addresses on
// the devices it manages.
package cnibridge

import (
	"context"
	"errors"
	"net"
	"net/netip"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// Name is the bridge of the flanneld job's CNI network: its conflist names none, so the bridge plugin's default.
const Name = "cni0"

// Follow removes from bridge every IPv4 address inside network (FLANNEL_NETWORK) other than gateway
// (FLANNEL_SUBNET, the gateway with the subnet's length) and returns what it removed. When it removes one, it
// puts gateway on the bridge first, if it is not there: the bridge is never without an address of the pod network,
// since dockerd, started on a bridge without an IPv4 address, gives it one of its own pools (172.17.0.1/16), which
// the bridge plugin then refuses. A missing bridge (no pod since boot) is left alone, and so are addresses outside
// network and IPv6 addresses, such as the bridge's link-local one.
func Follow(h *netlink.Handle, bridge string, network, gateway netip.Prefix) ([]netip.Prefix, error) {
	link, err := h.LinkByName(bridge)
	var notFound netlink.LinkNotFoundError
	if errors.As(err, &notFound) {
		return nil, nil
	}
	if err != nil {
		return nil, bosherr.WrapErrorf(err, "Looking up the CNI bridge %s", bridge)
	}
	addrs, err := h.AddrList(link, netlink.FAMILY_V4)
	if err != nil {
		return nil, bosherr.WrapErrorf(err, "Listing the addresses of %s", bridge)
	}
	var stale []netlink.Addr
	hasGateway := false
	for _, a := range addrs {
		if prefix := prefixOf(a); prefix == gateway {
			hasGateway = true
		} else if network.Contains(prefix.Addr()) {
			stale = append(stale, a)
		}
	}
	if len(stale) > 0 && !hasGateway {
		if err := h.AddrAdd(link, &netlink.Addr{IPNet: ipNet(gateway)}); err != nil {
			return nil, bosherr.WrapErrorf(err, "Adding %s to %s", gateway, bridge)
		}
	}
	var removed []netip.Prefix
	for _, a := range stale {
		if err := h.AddrDel(link, &a); err != nil {
			return removed, bosherr.WrapErrorf(err, "Removing %s from %s", a.IPNet, bridge)
		}
		removed = append(removed, prefixOf(a))
	}
	return removed, nil
}

// prefixOf is a's IPv4 address with its length; an invalid prefix for another family.
func prefixOf(a netlink.Addr) netip.Prefix {
	ip, _ := netip.AddrFromSlice(a.IP.To4())
	ones, _ := a.Mask.Size()
	return netip.PrefixFrom(ip, ones)
}

func ipNet(p netip.Prefix) *net.IPNet {
	return &net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}
}

// Keep calls Follow at once, and again each time an IPv4 address of network other than gateway appears on any
// link of the namespace (ns; nil: the caller's), until ctx ends; report gets what each call removed and its
// error. Once is not enough: docker's job deletes the bridge and makes it again, with the gateway of the subnet
// file it sourced, each time monit starts it, and monit may start it after the subnet changed, from the file of
// before (kubo-release #228 with docker on the node).
func Keep(ctx context.Context, ns *netns.NsHandle, bridge string, network, gateway netip.Prefix,
	report func([]netip.Prefix, error)) error {
	var h *netlink.Handle
	var err error
	if ns == nil {
		h, err = netlink.NewHandle(unix.NETLINK_ROUTE)
	} else {
		h, err = netlink.NewHandleAt(*ns, unix.NETLINK_ROUTE)
	}
	if err != nil {
		return bosherr.WrapError(err, "Opening a netlink handle")
	}
	defer h.Close()
	updates, done := make(chan netlink.AddrUpdate, 16), make(chan struct{})
	defer close(done)
	if err := netlink.AddrSubscribeWithOptions(updates, done, netlink.AddrSubscribeOptions{Namespace: ns}); err != nil {
		return bosherr.WrapError(err, "Subscribing to address changes")
	}
	report(Follow(h, bridge, network, gateway))
	for {
		select {
		case <-ctx.Done():
			return nil
		case u, open := <-updates:
			if !open {
				return bosherr.Error("The subscription to address changes ended")
			}
			if stray(u, network, gateway) {
				report(Follow(h, bridge, network, gateway))
			}
		}
	}
}

// stray tells whether u adds an IPv4 address of network other than gateway.
func stray(u netlink.AddrUpdate, network, gateway netip.Prefix) bool {
	prefix := prefixOf(netlink.Addr{IPNet: &u.LinkAddress})
	return u.NewAddr && prefix.IsValid() && network.Contains(prefix.Addr()) && prefix != gateway
}
