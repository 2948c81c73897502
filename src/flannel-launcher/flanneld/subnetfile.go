package flanneld

import (
	"net/netip"
	"os"
	"strings"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
)

// SubnetFile tells whether flanneld has written its subnet file since it started. flanneld replaces the file
// by renaming a new one over it, so every write makes a new file: one that is not the file seen before the
// start was written by this flanneld, whatever its content or time stamp.
type SubnetFile struct {
	Path   string
	before os.FileInfo
}

// WatchSubnetFile notes the file at path as it is now; call it before flanneld starts.
func WatchSubnetFile(path string) SubnetFile {
	before, err := os.Stat(path)
	if err != nil {
		before = nil // absent (or unreadable): any file found later is new
	}
	return SubnetFile{Path: path, before: before}
}

// Written tells whether a file other than the one noted is at the path now.
func (s SubnetFile) Written() bool {
	now, err := os.Stat(s.Path)
	if err != nil {
		return false
	}
	return s.before == nil || !os.SameFile(s.before, now)
}

// Subnets is what the subnet file says of the node's IPv4 addresses.
type Subnets struct {
	Network netip.Prefix // FLANNEL_NETWORK: the pod network flanneld runs on
	Subnet  netip.Prefix // FLANNEL_SUBNET: the node's subnet, as its gateway with the subnet's length (198.18.3.1/24)
}

// Subnets reads FLANNEL_NETWORK and FLANNEL_SUBNET from the file.
func (s SubnetFile) Subnets() (Subnets, error) {
	data, err := os.ReadFile(s.Path)
	if err != nil {
		return Subnets{}, bosherr.WrapErrorf(err, "Reading the subnet file '%s'", s.Path)
	}
	var result Subnets
	if result.Network, err = s.prefix(data, "FLANNEL_NETWORK"); err != nil {
		return Subnets{}, err
	}
	if result.Subnet, err = s.prefix(data, "FLANNEL_SUBNET"); err != nil {
		return Subnets{}, err
	}
	return result, nil
}

func (s SubnetFile) prefix(data []byte, name string) (netip.Prefix, error) {
	for _, line := range strings.Split(string(data), "\n") {
		if value, ok := strings.CutPrefix(line, name+"="); ok {
			prefix, err := netip.ParsePrefix(strings.TrimSpace(value))
			if err != nil {
				return netip.Prefix{}, bosherr.WrapErrorf(err, "%s in '%s'", name, s.Path)
			}
			return prefix, nil
		}
	}
	return netip.Prefix{}, bosherr.Errorf("No %s in '%s'", name, s.Path)
}
