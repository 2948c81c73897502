// Package subnetenv is flanneld's subnet file: the lines FLANNEL_NETWORK=, FLANNEL_SUBNET=, FLANNEL_MTU= and
// FLANNEL_IPMASQ= that the flannel CNI plugin reads and that docker's job sources, as root, with bash.
//
// Parse takes exactly what flanneld writes for an IPv4 pod network, and nothing else: those four keys, once
// each, in any order, every line ending in a newline, each value in its one canonical form (an IPv4 CIDR, a
// whole number, true or false). A file that passes can hold no byte that a shell would act on: keys are
// capitals and '_', values digits, '.', '/' and the letters of true and false. Format writes the file anew from
// the parsed values, never from the bytes read.
package subnetenv

import (
	"bytes"
	"errors"
	"fmt"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
)

// Env is what a subnet file says.
type Env struct {
	Network netip.Prefix // FLANNEL_NETWORK: the pod network flanneld runs on (no host bits)
	Subnet  netip.Prefix // FLANNEL_SUBNET: the node's subnet, as its gateway with the subnet's length (198.18.3.1/24)
	MTU     int          // FLANNEL_MTU: the pod interfaces' MTU
	IPMasq  bool         // FLANNEL_IPMASQ: whether flanneld masquerades traffic leaving the pod network
}

// The keys, in the order flanneld writes them.
const (
	keyNetwork = "FLANNEL_NETWORK"
	keySubnet  = "FLANNEL_SUBNET"
	keyMTU     = "FLANNEL_MTU"
	keyIPMasq  = "FLANNEL_IPMASQ"
)

// MaxSize bounds a subnet file: flanneld's four lines take at most 124 bytes.
const MaxSize = 512

// MinMTU and MaxMTU bound FLANNEL_MTU. 576 is the datagram every IPv4 host must take whole (RFC 791); flanneld
// takes its interface's MTU less the backend's header (at most 80 bytes, wireguard's), and no link it runs on is
// that small. 65535 is the most Linux lets the CNI bridge plugin set on cni0 and a pod's veth (ETH_MAX_MTU);
// loopback's 65536 is no link's. Jumbo frames (9001 on AWS, with host-gw) fit.
const (
	MinMTU = 576
	MaxMTU = 65535
)

// reserved are the IPv4 ranges no pod network may take in: a node keeps them for itself, or routes them nowhere.
var reserved = []struct {
	prefix netip.Prefix
	what   string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "unspecified"},
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local"},
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast"},
}

var (
	line   = regexp.MustCompile(`^([A-Z_]+)=(.*)$`)
	number = regexp.MustCompile(`^[1-9][0-9]{0,5}$`)
)

// Parse reads a subnet file's content; the error names the first line or key that is not as flanneld writes it.
func Parse(data []byte) (Env, error) {
	if len(data) > MaxSize {
		return Env{}, fmt.Errorf("larger than %d bytes", MaxSize)
	}
	if len(data) == 0 || data[len(data)-1] != '\n' {
		return Env{}, errors.New("the last line does not end with a newline")
	}
	values := map[string]string{}
	for i, text := range strings.Split(string(data[:len(data)-1]), "\n") {
		m := line.FindStringSubmatch(text)
		if m == nil || !isKey(m[1]) {
			return Env{}, fmt.Errorf("line %d: %q is not one of %s=, %s=, %s=, %s=", i+1, text,
				keyNetwork, keySubnet, keyMTU, keyIPMasq)
		}
		if _, twice := values[m[1]]; twice {
			return Env{}, fmt.Errorf("line %d: %s is set a second time", i+1, m[1])
		}
		values[m[1]] = m[2]
	}
	for _, key := range []string{keyNetwork, keySubnet, keyMTU, keyIPMasq} {
		if _, set := values[key]; !set {
			return Env{}, fmt.Errorf("%s is missing", key)
		}
	}
	return parseValues(values)
}

func isKey(key string) bool {
	return key == keyNetwork || key == keySubnet || key == keyMTU || key == keyIPMasq
}

func parseValues(values map[string]string) (Env, error) {
	var env Env
	var ok bool
	if env.Network, ok = ipv4Prefix(values[keyNetwork]); !ok || env.Network != env.Network.Masked() {
		return Env{}, fmt.Errorf("%s must be an IPv4 network such as 10.200.0.0/16, got %q", keyNetwork, values[keyNetwork])
	}
	if err := unreserved(keyNetwork, env.Network); err != nil {
		return Env{}, err
	}
	env.Subnet, ok = ipv4Prefix(values[keySubnet])
	if ok {
		if err := unreserved(keySubnet, env.Subnet); err != nil {
			return Env{}, err
		}
	}
	if !ok || env.Subnet.Bits() < env.Network.Bits() || !env.Network.Contains(env.Subnet.Addr()) {
		return Env{}, fmt.Errorf("%s must be an address of %s with the subnet's length, such as %s, got %q",
			keySubnet, env.Network, example(env.Network), values[keySubnet])
	}
	mtu := values[keyMTU]
	if env.MTU, _ = strconv.Atoi(mtu); !number.MatchString(mtu) || env.MTU < MinMTU || env.MTU > MaxMTU {
		return Env{}, fmt.Errorf("%s must be a whole number from %d to %d, got %q", keyMTU, MinMTU, MaxMTU, mtu)
	}
	switch values[keyIPMasq] {
	case "true", "false":
		env.IPMasq = values[keyIPMasq] == "true"
	default:
		return Env{}, fmt.Errorf("%s must be true or false, got %q", keyIPMasq, values[keyIPMasq])
	}
	return env, nil
}

// unreserved fails when prefix (the value of key) is all of IPv4 or takes in a reserved range.
func unreserved(key string, prefix netip.Prefix) error {
	if prefix.Bits() == 0 {
		return fmt.Errorf("%s must not be all of IPv4, got %q", key, prefix.String())
	}
	for _, r := range reserved {
		if r.prefix.Overlaps(prefix) {
			return fmt.Errorf("%s must not take in the %s addresses %s, got %q", key, r.what, r.prefix, prefix.String())
		}
	}
	return nil
}

// ipv4Prefix parses an IPv4 CIDR written as Go writes it back: no leading zeros, no spaces, no IPv6 form.
func ipv4Prefix(text string) (netip.Prefix, bool) {
	prefix, err := netip.ParsePrefix(text)
	if err != nil || !prefix.Addr().Is4() || prefix.String() != text {
		return netip.Prefix{}, false
	}
	return prefix, true
}

// example is the gateway of the first /24 of network (or of network itself when that is narrower).
func example(network netip.Prefix) string {
	bits := max(network.Bits(), 24)
	return netip.PrefixFrom(network.Addr().Next(), bits).String()
}

// Format writes env as flanneld does, from its values.
func (e Env) Format() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s=%s\n%s=%s\n", keyNetwork, e.Network, keySubnet, e.Subnet)
	fmt.Fprintf(&b, "%s=%d\n%s=%t\n", keyMTU, e.MTU, keyIPMasq, e.IPMasq)
	return b.Bytes()
}

// String is the file's content on one line, for logs.
func (e Env) String() string {
	return strings.ReplaceAll(strings.TrimSuffix(string(e.Format()), "\n"), "\n", " ")
}
