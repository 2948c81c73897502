package v2import

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"strings"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
)

// checked is the part of the v2 data that can go into v3, and why the rest cannot.
type checked struct {
	network netip.Prefix // of the v2 network config
	leases  []lease
	leftOut []string // "<key>: <reason>"
}

// lease is a v2 lease that reads as flannel's.
type lease struct {
	Lease
	subnet netip.Prefix
	node   string // its PublicIP
}

// check reads the network config and keeps the leases that flannel would read as leases of that network: a
// subnet key inside it, attributes naming the node's address, a TTL. Without a usable config nothing is
// imported: the leases cannot be checked against a network.
func check(data Data, prefix string) (checked, error) {
	network, err := networkOf(data.Config)
	if err != nil {
		return checked{}, bosherr.WrapErrorf(err, "The network config at '%s/config' in the v2 store", prefix)
	}
	c := checked{network: network}
	for _, l := range data.Leases {
		read, err := c.read(l, prefix)
		if err != nil {
			c.leftOut = append(c.leftOut, fmt.Sprintf("%s: %s", l.Key, err))
			continue
		}
		c.leases = append(c.leases, read)
	}
	return c, nil
}

func networkOf(config []byte) (netip.Prefix, error) {
	if config == nil {
		return netip.Prefix{}, bosherr.Error("is absent")
	}
	var fields struct{ Network string }
	if err := json.Unmarshal(config, &fields); err != nil {
		return netip.Prefix{}, bosherr.WrapErrorf(err, "is not JSON: %q", config)
	}
	network, err := netip.ParsePrefix(fields.Network)
	if err != nil || !network.Addr().Is4() {
		return netip.Prefix{}, bosherr.Errorf("has no IPv4 Network: %q", config)
	}
	return network.Masked(), nil
}

// read checks one lease.
func (c checked) read(l Lease, prefix string) (lease, error) {
	subnet, err := SubnetOf(l.Key, prefix)
	if err != nil {
		return lease{}, err
	}
	if !c.network.Contains(subnet.Addr()) || subnet.Bits() <= c.network.Bits() {
		return lease{}, bosherr.Errorf("subnet %s is not inside the network %s", subnet, c.network)
	}
	if l.TTL <= 0 {
		return lease{}, bosherr.Error("it has no TTL (kubo's flanneld writes none such)")
	}
	node, err := nodeOf(l.Value)
	return lease{Lease: l, subnet: subnet, node: node}, err
}

// nodeOf is the node address (PublicIP) in a lease's attributes.
func nodeOf(value []byte) (string, error) {
	var attrs struct{ PublicIP string }
	if err := json.Unmarshal(value, &attrs); err != nil {
		return "", bosherr.WrapErrorf(err, "its value is not JSON: %q", value)
	}
	node, err := netip.ParseAddr(attrs.PublicIP)
	if err != nil || !node.Is4() {
		return "", bosherr.Errorf("its value names no IPv4 PublicIP: %q", value)
	}
	return node.String(), nil
}

// SubnetOf is the subnet of a lease key, <prefix>/subnets/198.18.7.0-24.
func SubnetOf(key, prefix string) (netip.Prefix, error) {
	name, ok := strings.CutPrefix(key, strings.TrimSuffix(prefix, "/")+"/subnets/")
	if !ok {
		return netip.Prefix{}, bosherr.Errorf("'%s' is not under %s/subnets", key, prefix)
	}
	subnet, err := netip.ParsePrefix(strings.Replace(name, "-", "/", 1))
	if err != nil || !subnet.Addr().Is4() || subnet != subnet.Masked() {
		return netip.Prefix{}, bosherr.Errorf("'%s' does not name an IPv4 subnet", name)
	}
	return subnet, nil
}
