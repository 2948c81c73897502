// Package master talks to the etcd member of a simulated master, which cfcr-etcd's own etcd job runs under bpm
// (its start script bootstraps or joins with `member add`, its drain runs `member remove`, its post-start
// waits for health): this package only does what an operator would do on the VM, with the job's etcdctl
// certificate, and what a crash or `monit stop` would do to the process.
package master

import (
	"encoding/json"
	"fmt"
	"strings"
	"syscall"
	"time"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"

	"github.com/flannel-dns/flannel-dns/src/e2e/agent"
	"github.com/flannel-dns/flannel-dns/src/e2e/procstats"
	"github.com/flannel-dns/flannel-dns/src/e2e/vm"
)

const (
	// ConfigDir is where the etcd job's certificates are (etcdctl-ca.crt, etcdctl.crt, etcdctl.key, ...).
	ConfigDir = "/var/vcap/jobs/etcd/config"
	etcdctl   = "/var/vcap/packages/etcd/bin/etcdctl"
	// Process is the etcd job's monit process.
	Process = "etcd"
)

// Member is one master instance.
type Member struct {
	*vm.VM
	Agent  *agent.Agent
	Index  int
	Domain string // cfcr.internal
}

// Host is the name the member advertises, as cfcr-etcd derives it from etcd.dns_suffix.
func (m *Member) Host() string { return fmt.Sprintf("master-%d.etcd.%s", m.Index, m.Domain) }

// ClientURL is the advertised client URL.
func (m *Member) ClientURL() string { return "https://" + m.Host() + ":2379" }

// Etcdctl runs etcdctl (v3 API) on the member's VM with the etcd job's etcdctl certificate, against its own
// client URL unless args name other endpoints.
func (m *Member) Etcdctl(args ...string) (string, error) {
	full := []string{"env", "ETCDCTL_API=3", etcdctl, "--endpoints=" + m.ClientURL(),
		"--cacert=" + ConfigDir + "/etcdctl-ca.crt", "--cert=" + ConfigDir + "/etcdctl.crt",
		"--key=" + ConfigDir + "/etcdctl.key", "--command-timeout=5s"}
	return m.Run(append(full, args...)...)
}

// EtcdctlV2 runs etcdctl against the member's v2 API, as kubo's flanneld job does, with the same certificate.
func (m *Member) EtcdctlV2(args ...string) (string, error) {
	full := []string{"env", "ETCDCTL_API=2", etcdctl, "--endpoints=" + m.ClientURL(),
		"--ca-file=" + ConfigDir + "/etcdctl-ca.crt", "--cert-file=" + ConfigDir + "/etcdctl.crt",
		"--key-file=" + ConfigDir + "/etcdctl.key", "--timeout=5s"}
	return m.Run(append(full, args...)...)
}

// V2Values reads every key under dir in the v2 store with its value ("" for a directory), none when dir does
// not exist.
func (m *Member) V2Values(dir string) (map[string]string, error) {
	out, err := m.EtcdctlV2("ls", dir)
	if err != nil {
		if strings.Contains(err.Error(), "Key not found") {
			return map[string]string{}, nil
		}
		return nil, err
	}
	values := map[string]string{}
	for _, key := range strings.Fields(out) {
		value, err := m.EtcdctlV2("get", key)
		if err != nil {
			return nil, err
		}
		values[key] = strings.TrimSpace(value)
	}
	return values, nil
}

// WaitHealthy waits until the member answers a health check through its own client URL.
func (m *Member) WaitHealthy(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		_, err := m.Etcdctl("endpoint", "health")
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return bosherr.WrapErrorf(err, "etcd on %s not healthy after %s", m.Name, timeout)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// Members lists the names of the cluster's members (cfcr-etcd names them by instance ID), as this member sees them.
func (m *Member) Members() ([]string, error) {
	out, err := m.Etcdctl("member", "list", "-w", "json")
	if err != nil {
		return nil, err
	}
	var list struct {
		Members []struct {
			Name string `json:"name"`
		} `json:"members"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		return nil, bosherr.WrapErrorf(err, "Parsing the member list from %s", m.Name)
	}
	var names []string
	for _, member := range list.Members {
		names = append(names, member.Name)
	}
	return names, nil
}

// Running tells whether the etcd job's process runs.
func (m *Member) Running() bool { return m.Agent.PID(Process) != 0 }

// Halt stops etcd with monit's stop program (bpm stop), keeping its data for Resume.
func (m *Member) Halt() error { return m.Agent.StopProcess(Process) }

// Resume starts etcd again with monit's start program (bpm start), on the data it had.
func (m *Member) Resume() error {
	if m.Running() {
		return nil
	}
	return m.Agent.StartProcess(Process)
}

// Kill sends SIGKILL to etcd, as a crash would (the kernel resets its clients' connections), and waits until
// the process has died: not until it is reaped, which the host's init does only every second or two (bpm's
// container process is an orphan), and which the figures timed from the kill would otherwise count. Its
// data stays; monit starts it again on its next cycle.
func (m *Member) Kill() error {
	pid := m.Agent.PID(Process)
	if pid == 0 {
		return bosherr.Errorf("No etcd process on %s to kill", m.Name)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		return bosherr.WrapErrorf(err, "Killing etcd (pid %d) on %s", pid, m.Name)
	}
	deadline := time.Now().Add(10 * time.Second)
	for procstats.Running(pid) {
		if time.Now().After(deadline) {
			return bosherr.Errorf("etcd (pid %d) on %s still there 10s after SIGKILL", pid, m.Name)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil
}
