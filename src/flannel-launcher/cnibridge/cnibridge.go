// Package cnibridge keeps the CNI bridge's address in step with the node's flannel subnet.
//
// The bridge plugin gives the bridge the gateway of the subnet that the flannel plugin reads from flanneld's
// subnet file, when the first pod comes, and refuses every later pod if the bridge has another IPv4 address
// ("cni0 already has an IP address different from ..."). When the node gets a new subnet while the bridge
// outlives the old one (its lease expired and another node took the subnet while the job was stopped: kubo-release
// #228), no pod starts again, and the node keeps routing the old subnet, maybe another node's by now, to its
// bridge. Follow removes every IPv4 address of the bridge inside the pod network other than the new gateway: the
// bridge plugin adds the gateway with the next pod, and pods left with an address from the old subnet are cut off,
// as they must be (kubelet makes them again when their sandboxes are recreated). An address outside the pod
// network is someone else's (an operator's, another network's) and stays, as flanneld leaves such addresses on
// the devices it manages.
package cnibridge

import (
	"errors"
	"net/netip"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
	"github.com/vishvananda/netlink"
)

// Name is the bridge of the flanneld job's CNI network: its conflist names none, so the bridge plugin's default.
const Name = "cni0"

// Follow removes from bridge every IPv4 address inside network (FLANNEL_NETWORK) other than gateway
// (FLANNEL_SUBNET, the gateway with the subnet's length) and returns what it removed. A missing bridge (no pod
// since boot) is left alone, and so are addresses outside network and IPv6 addresses, such as the bridge's
// link-local one.
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
	var removed []netip.Prefix
	for _, a := range addrs {
		ip, _ := netip.AddrFromSlice(a.IP.To4())
		ones, _ := a.Mask.Size()
		prefix := netip.PrefixFrom(ip, ones)
		if prefix == gateway || !network.Contains(ip) {
			continue
		}
		if err := h.AddrDel(link, &a); err != nil {
			return removed, bosherr.WrapErrorf(err, "Removing %s from %s", prefix, bridge)
		}
		removed = append(removed, prefix)
	}
	return removed, nil
}
