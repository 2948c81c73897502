package netconfig

import (
	"encoding/json"
	"fmt"
	"net/netip"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
)

// PodNetwork is what flanneld takes from a network config for its leases and its subnet file.
type PodNetwork struct {
	Network   netip.Prefix // Network, without host bits
	SubnetLen int          // SubnetLen, or flannel's default for a config without one
}

func (p PodNetwork) String() string {
	return fmt.Sprintf("%s in /%d subnets", p.Network, p.SubnetLen)
}

// PodNetworkOf reads a network config as flanneld does; the error says what it lacks.
func PodNetworkOf(config []byte) (PodNetwork, error) {
	if config == nil {
		return PodNetwork{}, bosherr.Error("is absent")
	}
	var fields struct {
		Network   string
		SubnetLen int
	}
	if err := json.Unmarshal(config, &fields); err != nil {
		return PodNetwork{}, bosherr.WrapErrorf(err, "is not JSON: %q", config)
	}
	network, err := netip.ParsePrefix(fields.Network)
	if err != nil || !network.Addr().Is4() {
		return PodNetwork{}, bosherr.Errorf("has no IPv4 Network: %q", config)
	}
	return PodNetwork{Network: network.Masked(), SubnetLen: subnetLen(fields.SubnetLen, network.Bits())}, nil
}

// subnetLen is a config's SubnetLen, or for none what flannel (0.12 and 0.28 alike) takes: a /24 in a network of
// /22 or wider, else a quarter of the network.
func subnetLen(configured, networkBits int) int {
	switch {
	case configured != 0:
		return configured
	case networkBits <= 22:
		return 24
	}
	return networkBits + 2
}

// Effective is the config flanneld starts on after Ensure: the desired one when the stored one is now equal to
// it, else the stored one, left as it was.
func (r Result) Effective() []byte {
	if r.Created || r.Overwritten || r.State == Equal {
		return r.Desired
	}
	return r.Existing
}
