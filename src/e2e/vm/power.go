package vm

import (
	"encoding/json"
	"os/exec"
	"slices"
	"strings"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
)

// PowerOff is what a power cut, and the boot after it, take from the VM before anything starts again: every
// process killed with SIGKILL (no clean-up runs), what lives in memory gone (/run, /var/vcap/sys/run), and
// the network state that no boot script restores: every interface but lo, eth0 (the VM's NIC) and keep, the
// addresses added to lo, the packet filter rules, IP forwarding and bridge netfilter back at their defaults, and
// the stemcell's sysctls applied again.
func (v *VM) PowerOff(keep ...string) error {
	if err := v.KillAll(); err != nil {
		return err
	}
	if err := v.ForgetVolatile(); err != nil {
		return err
	}
	if err := v.deleteLinks(append([]string{"lo", "eth0"}, keep...)); err != nil {
		return err
	}
	for _, args := range [][]string{
		{"ip", "addr", "flush", "dev", "lo", "scope", "global"}, // what was added; 127.0.0.1 and ::1 are scope host
		{"nft", "flush", "ruleset"},
		{"sysctl", "-qw", "net.ipv4.ip_forward=0"},
		{"sysctl", "-qw", "-e", "net.bridge.bridge-nf-call-iptables=0"},
	} {
		if _, err := v.Run(args...); err != nil {
			return err
		}
	}
	return v.applySysctls() // the boot's, again
}

func (v *VM) deleteLinks(keep []string) error {
	out, err := exec.Command("ip", "-n", v.Namespace, "-j", "link", "show").Output()
	if err != nil {
		return bosherr.WrapErrorf(err, "Listing interfaces on %s", v.Name)
	}
	var links []struct {
		Name string `json:"ifname"`
	}
	if err := json.Unmarshal(out, &links); err != nil {
		return bosherr.WrapErrorf(err, "Parsing interfaces of %s", v.Name)
	}
	for _, l := range links {
		if slices.Contains(keep, l.Name) {
			continue
		}
		if out, err := exec.Command("ip", "-n", v.Namespace, "link", "del", l.Name).CombinedOutput(); err != nil {
			return bosherr.WrapErrorf(err, "Deleting %s on %s: %s", l.Name, v.Name, strings.TrimSpace(string(out)))
		}
	}
	return nil
}
