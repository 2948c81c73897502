// Package podnet sets a pod sandbox's network up and tears it down as kubelet's CNI code does for a container
// runtime (dockershim, which kubo's kubelet runs with docker), through libcni: the loopback network on lo, then
// the default network on eth0, the first configuration file of the CNI config directory by name. libcni runs
// the network's plugins in order, each with the previous one's result, and caches the result.
package podnet

import (
	"context"
	"sort"
	"strings"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
	"github.com/containernetworking/cni/libcni"
	"github.com/containernetworking/cni/pkg/types"
)

// IfName is the pod's interface on the default network, as kubelet names it.
const IfName = "eth0"

// loopbackConf is kubelet's own loopback network.
const loopbackConf = `{"cniVersion": "0.2.0", "name": "cni-loopback", "plugins": [{"type": "loopback"}]}`

// Sandbox is one pod sandbox, as kubelet describes it to the plugins.
type Sandbox struct {
	ID           string        // CNI_CONTAINERID: the sandbox (pause) container
	NetNS        string        // CNI_NETNS
	PodName      string        // K8S_POD_NAME
	PodNamespace string        // K8S_POD_NAMESPACE
	PortMappings []PortMapping // hostPort: the portMappings capability
}

// PortMapping is one hostPort of a pod, in the portMappings capability's form.
type PortMapping struct {
	HostPort      int    `json:"hostPort"`
	ContainerPort int    `json:"containerPort"`
	Protocol      string `json:"protocol"`
	HostIP        string `json:"hostIP,omitempty"`
}

// Networks are the loopback and the default network, with the plugins' directories.
type Networks struct {
	cni      *libcni.CNIConfig
	loopback *libcni.NetworkConfigList
	Default  *libcni.NetworkConfigList
	File     string // where the default network came from
}

// Load reads the default network from confDir as kubelet does: the files ending in .conf, .conflist or .json,
// sorted by name, the first that parses and has plugins. binDirs is CNI_PATH.
func Load(confDir string, binDirs []string) (*Networks, error) {
	files, err := libcni.ConfFiles(confDir, []string{".conf", ".conflist", ".json"})
	if err != nil {
		return nil, bosherr.WrapErrorf(err, "Listing CNI configs in %s", confDir)
	}
	sort.Strings(files)
	lo, err := libcni.ConfListFromBytes([]byte(loopbackConf))
	if err != nil {
		return nil, bosherr.WrapError(err, "Parsing the loopback network")
	}
	for _, file := range files {
		list, err := load(file)
		if err != nil || len(list.Plugins) == 0 {
			continue // kubelet skips a file it cannot use
		}
		return &Networks{cni: libcni.NewCNIConfig(binDirs, nil), loopback: lo, Default: list, File: file}, nil
	}
	return nil, bosherr.Errorf("No usable CNI network config in %s", confDir)
}

func load(file string) (*libcni.NetworkConfigList, error) {
	if strings.HasSuffix(file, ".conflist") {
		return libcni.ConfListFromFile(file)
	}
	conf, err := libcni.ConfFromFile(file)
	if err != nil {
		return nil, err
	}
	return libcni.ConfListFromConf(conf)
}

// Setup adds the sandbox to the loopback network, then to the default network, and returns the default
// network's result.
func (n *Networks) Setup(ctx context.Context, s Sandbox) (types.Result, error) {
	if _, err := n.cni.AddNetworkList(ctx, n.loopback, s.runtimeConf("lo")); err != nil {
		return nil, bosherr.WrapErrorf(err, "Adding sandbox %s to the loopback network", s.ID)
	}
	result, err := n.cni.AddNetworkList(ctx, n.Default, s.runtimeConf(IfName))
	if err != nil {
		return nil, bosherr.WrapErrorf(err, "Adding sandbox %s to network %s (%s)", s.ID, n.Default.Name, n.File)
	}
	return result, nil
}

// Teardown deletes the sandbox from both networks; its network namespace may be gone already (a dead
// sandbox), which the plugins allow. A failure on the loopback network is not fatal, as in kubelet.
func (n *Networks) Teardown(ctx context.Context, s Sandbox) error {
	_ = n.cni.DelNetworkList(ctx, n.loopback, s.runtimeConf("lo"))
	if err := n.cni.DelNetworkList(ctx, n.Default, s.runtimeConf(IfName)); err != nil {
		return bosherr.WrapErrorf(err, "Deleting sandbox %s from network %s (%s)", s.ID, n.Default.Name, n.File)
	}
	return nil
}

func (s Sandbox) runtimeConf(ifName string) *libcni.RuntimeConf {
	rt := &libcni.RuntimeConf{ContainerID: s.ID, NetNS: s.NetNS, IfName: ifName,
		Args: [][2]string{{"IgnoreUnknown", "1"}, {"K8S_POD_NAMESPACE", s.PodNamespace}, {"K8S_POD_NAME", s.PodName},
			{"K8S_POD_INFRA_CONTAINER_ID", s.ID}}}
	if len(s.PortMappings) > 0 {
		rt.CapabilityArgs = map[string]interface{}{"portMappings": s.PortMappings}
	}
	return rt
}
