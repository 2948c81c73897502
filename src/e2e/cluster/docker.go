package cluster

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"

	"github.com/flannel-dns/flannel-dns/src/e2e/worker"
)

// DockerProcess is the monit process of docker's job on a worker.
const DockerProcess = "docker"

// DockerOnSubnet tells whether docker runs on w and its bridge, cni0, carries the gateway of w's subnet
// (subnet.env's FLANNEL_SUBNET), as docker's start makes it.
func DockerOnSubnet(w *worker.Worker, subnet string) bool {
	if w.Agent.PID(DockerProcess) == 0 {
		return false
	}
	addrs, err := Addresses(w, "cni0")
	return err == nil && slices.Contains(addrs, subnet)
}

// Addresses lists the IPv4 addresses of link on w, each with its length; none when there is no such link.
func Addresses(w *worker.Worker, link string) ([]string, error) {
	out, err := exec.Command("ip", "-n", w.VM.Host.Namespace, "-j", "-4", "addr", "show", "dev", link).Output()
	if err != nil {
		if _, missing := err.(*exec.ExitError); missing {
			return nil, nil
		}
		return nil, bosherr.WrapErrorf(err, "Listing the addresses of %s on %s", link, w.Name)
	}
	var l []struct {
		Addrs []struct {
			Local     string `json:"local"`
			PrefixLen int    `json:"prefixlen"`
		} `json:"addr_info"`
	}
	if err := json.Unmarshal(out, &l); err != nil {
		return nil, bosherr.WrapErrorf(err, "Reading the addresses of %s on %s", link, w.Name)
	}
	var addrs []string
	for _, iface := range l {
		for _, a := range iface.Addrs {
			addrs = append(addrs, fmt.Sprintf("%s/%d", a.Local, a.PrefixLen))
		}
	}
	return addrs, nil
}
