// Package cni makes pods on a simulated worker VM as kubelet does with docker: a sandbox process (docker's
// pause container) holds the pod's network namespace, and the podnet command, run on the VM in its
// namespaces and cgroup, adds it to the networks of the VM's /etc/cni/net.d through the real CNI plugins
// (CNI_NETNS is /proc/<sandbox>/ns/net, as dockershim passes it), or deletes it from them.
package cni

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
	current "github.com/containernetworking/cni/pkg/types/100"

	"github.com/flannel-dns/flannel-dns/src/e2e/cni/podnet"
	"github.com/flannel-dns/flannel-dns/src/e2e/pods"
	"github.com/flannel-dns/flannel-dns/src/e2e/vm"
)

// PortMapping is a pod's hostPort.
type PortMapping = podnet.PortMapping

// Runtime is the container runtime of one VM.
type Runtime struct {
	VM     *vm.VM
	Podnet string // the podnet command (Build)
	BinDir string // CNI_PATH on the VM: kubelet's --cni-bin-dir
}

// Pod is a pod sandbox with its network, as the default network's ADD result describes it.
type Pod struct {
	pods.Pod        // its network namespace (/proc/<sandbox>/ns/net) and eth0's address, for probing
	Name     string // K8S_POD_NAME
	ID       string // CNI_CONTAINERID
	Prefix   netip.Prefix
	Gateway  netip.Addr
	HostVeth string // the pod's veth on the VM
	Ports    []PortMapping

	sandbox *exec.Cmd
	exited  chan struct{} // closed once the sandbox has died and been reaped
}

// Add starts a sandbox called name on the VM and adds it to the networks, with the given hostPorts. A
// sandbox whose ADD failed is stopped again (podnet has released what the plugins took).
func (r *Runtime) Add(name string, ports ...PortMapping) (*Pod, error) {
	p := &Pod{Name: name, ID: newID(), Ports: ports}
	if err := p.start(r.VM); err != nil {
		return nil, err
	}
	out, err := r.podnet(p, "add")
	if err != nil {
		p.stop()
		return nil, err
	}
	if err := p.read(out); err != nil {
		_, _ = r.podnet(p, "del")
		p.stop()
		return nil, bosherr.WrapErrorf(err, "Pod %s on %s", name, r.VM.Name)
	}
	return p, nil
}

// Del deletes the pod from the networks, then stops its sandbox. A pod whose sandbox died (the VM rebooted)
// is deleted as kubelet deletes a dead sandbox: with no network namespace (its PID may name another process
// by now), and the plugins release what they keep outside it (the address).
func (r *Runtime) Del(p *Pod) error {
	_, err := r.podnet(p, "del")
	p.stop()
	return err
}

func (r *Runtime) podnet(p *Pod, command string) (string, error) {
	netns := p.Namespace
	select {
	case <-p.exited:
		netns = ""
	default:
	}
	args := []string{r.Podnet, command, "--id", p.ID, "--netns", netns, "--pod", p.Name, "--bin-dir", r.BinDir}
	if len(p.Ports) > 0 {
		ports, err := json.Marshal(p.Ports)
		if err != nil {
			return "", bosherr.WrapError(err, "Encoding hostPorts")
		}
		args = append(args, "--ports", string(ports))
	}
	return r.VM.Run(args...)
}

// start runs the sandbox on the VM: a process in a network namespace of its own, in the VM's cgroup, so that
// it dies with the VM. nsenter and unshare exec without forking, so once the process is sleep, its namespace
// is the new one.
func (p *Pod) start(v *vm.VM) error {
	p.sandbox = v.Command("unshare", "--net", "--", "sleep", "infinity")
	if err := p.sandbox.Start(); err != nil {
		return bosherr.WrapErrorf(err, "Starting the sandbox of pod %s on %s", p.Name, v.Name)
	}
	p.exited = make(chan struct{})
	go func() {
		_ = p.sandbox.Wait()
		close(p.exited)
	}()
	pid := strconv.Itoa(p.sandbox.Process.Pid)
	p.Namespace = "/proc/" + pid + "/ns/net"
	deadline := time.Now().Add(10 * time.Second)
	for {
		comm, err := os.ReadFile("/proc/" + pid + "/comm")
		if err == nil && strings.TrimSpace(string(comm)) == "sleep" {
			return nil
		}
		if err != nil || time.Now().After(deadline) {
			p.stop()
			return bosherr.Errorf("The sandbox of pod %s on %s did not start (%v)", p.Name, v.Name, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (p *Pod) stop() {
	select {
	case <-p.exited:
	default:
		_ = p.sandbox.Process.Signal(syscall.SIGKILL)
		<-p.exited
	}
}

// read takes eth0's address, its gateway and the host's veth (when the result names it) from the default
// network's result.
func (p *Pod) read(out string) error {
	var result current.Result
	if err := json.Unmarshal([]byte(out), &result); err != nil {
		return bosherr.WrapErrorf(err, "Parsing the ADD result '%s'", strings.TrimSpace(out))
	}
	for _, ip := range result.IPs {
		// A result of CNI 0.2.0 (kubo's conflist names no cniVersion) names no interfaces: its one address is
		// eth0's, which is where kubelet's dockershim read the pod's address.
		onEth0 := len(result.Interfaces) == 0 && len(result.IPs) == 1
		if !onEth0 && (ip.Interface == nil || *ip.Interface >= len(result.Interfaces) || result.Interfaces[*ip.Interface].Name != podnet.IfName) {
			continue
		}
		addr, _ := netip.AddrFromSlice(ip.Address.IP.To4())
		ones, _ := ip.Address.Mask.Size()
		p.Prefix = netip.PrefixFrom(addr, ones)
		p.Gateway, _ = netip.AddrFromSlice(ip.Gateway.To4())
		p.Address = addr
	}
	for _, iface := range result.Interfaces {
		if iface.Sandbox == "" && strings.HasPrefix(iface.Name, "veth") {
			p.HostVeth = iface.Name
		}
	}
	if !p.Address.IsValid() {
		return bosherr.Errorf("No IPv4 address on %s in the ADD result '%s'", podnet.IfName, strings.TrimSpace(out))
	}
	return nil
}

func newID() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Build compiles the podnet command of the checkout at repo into dir and returns its path.
func Build(repo, dir string) (string, error) {
	out := filepath.Join(dir, "podnet")
	cmd := exec.Command("go", "build", "-o", out, "./src/e2e/cmd/podnet")
	cmd.Dir = repo
	if output, err := cmd.CombinedOutput(); err != nil {
		return "", bosherr.WrapErrorf(err, "Building podnet: %s", strings.TrimSpace(string(output)))
	}
	return out, nil
}
