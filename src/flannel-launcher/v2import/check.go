package v2import

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/netconfig"
)

// checked is the part of the v2 data that can go into v3, and why the rest cannot.
type checked struct {
	config  netconfig.PodNetwork // of the v2 network config
	leases  []lease
	leftOut []string // "<key>: <reason>"
}

// lease is a v2 lease that reads as flannel's.
type lease struct {
	Lease
	subnet netip.Prefix
	node   string // its PublicIP
}

// maxValue bounds a lease's value: flannel's are well under 1 KiB.
const maxValue = 64 << 10

// maxTTL (seconds) caps the TTL a lease keeps: flannel's lease TTL (its subnetTTL), which each renewal restores.
const maxTTL = 24 * 60 * 60

// check reads the network config and keeps the leases that flannel would read as leases of that network: a
// subnet key inside it of the config's subnet length, overlapping no other lease, attributes naming the node's
// address, a TTL. Without a usable config nothing is imported: the leases cannot be checked against a network.
func check(data Data, prefix string) (checked, error) {
	config, err := netconfig.PodNetworkOf(data.Config)
	if err != nil {
		return checked{}, bosherr.WrapErrorf(err, "The network config at '%s/config' in the v2 store", prefix)
	}
	c := checked{config: config}
	c.keep(c.readAll(data.Leases, prefix))
	return c, nil
}

// readAll is the leases that read as flannel's, whatever their length; the others are left out.
func (c *checked) readAll(leases []Lease, prefix string) []lease {
	var read []lease
	for _, l := range leases {
		r, err := c.read(l, prefix)
		if err != nil {
			c.leaveOut(l.Key, err.Error())
			continue
		}
		read = append(read, r)
	}
	return read
}

// keep takes the leases that overlap no other and have the config's subnet length. Of two that overlap, neither
// is taken: v2 cannot tell which is right, and launchers importing at once could each take another one.
func (c *checked) keep(leases []lease) {
	overlaps := overlapping(leases)
	for _, l := range leases {
		switch {
		case overlaps[l.Key] != "":
			c.leaveOut(l.Key, overlaps[l.Key])
		case l.subnet.Bits() != c.config.SubnetLen:
			c.leaveOut(l.Key, fmt.Sprintf("subnet %s is not a /%d, the network config's subnet length", l.subnet, c.config.SubnetLen))
		default:
			c.leases = append(c.leases, l)
		}
	}
}

func (c *checked) leaveOut(key, reason string) {
	c.leftOut = append(c.leftOut, fmt.Sprintf("%s: %s", key, reason))
}

// overlapping is, by key, why each lease that overlaps another is refused. Subnets are nested or apart, so in
// address order a subnet overlaps an earlier one only if it lies inside the widest one seen so far.
func overlapping(leases []lease) map[string]string {
	sorted := slices.SortedFunc(slices.Values(leases), func(a, b lease) int {
		return cmp.Or(a.subnet.Addr().Compare(b.subnet.Addr()), cmp.Compare(a.subnet.Bits(), b.subnet.Bits()))
	})
	reasons := map[string]string{}
	var widest lease
	for _, l := range sorted {
		if !widest.subnet.IsValid() || !widest.subnet.Overlaps(l.subnet) {
			widest = l
			continue
		}
		reasons[l.Key] = fmt.Sprintf("subnet %s overlaps the v2 lease at '%s'", l.subnet, widest.Key)
		if reasons[widest.Key] == "" {
			reasons[widest.Key] = fmt.Sprintf("subnet %s overlaps the v2 lease at '%s'", widest.subnet, l.Key)
		}
	}
	return reasons
}

// read checks one lease, all but its length, and caps its TTL.
func (c checked) read(l Lease, prefix string) (lease, error) {
	subnet, err := SubnetOf(l.Key, prefix)
	if err != nil {
		return lease{}, err
	}
	network := c.config.Network
	if !network.Contains(subnet.Addr()) || subnet.Bits() <= network.Bits() {
		return lease{}, bosherr.Errorf("subnet %s is not inside the network %s", subnet, network)
	}
	if l.TTL <= 0 {
		return lease{}, bosherr.Error("it has no TTL (kubo's flanneld writes none such)")
	}
	if len(l.Value) > maxValue {
		return lease{}, bosherr.Errorf("its value is %d bytes, more than %d", len(l.Value), maxValue)
	}
	l.TTL = min(l.TTL, maxTTL)
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
