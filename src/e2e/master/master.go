// Package master runs a real etcd member on a simulated master VM the way cfcr-etcd does: TLS with
// client certificates for clients and peers (the certificates of the manifest's etcd job), advertising
// https://master-N.etcd.<domain>, the first member bootstrapping the cluster and every later one joining with
// `member add` before it starts, and leaving with `member remove` when drained. No BOSH job of a release here
// runs it (cfcr-etcd's is not in this repository), so the agent starts and stops it beside the jobs.
package master

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"

	"github.com/flannel-dns/flannel-dns/src/e2e/vm"
)

const (
	// ConfigDir holds the member's certificates (ca.crt, client.crt, client.key, ...); not under /var/vcap/jobs, which is the agent's.
	ConfigDir = "/var/vcap/data/etcd/config"
	dataDir   = "/var/vcap/store/etcd"
	process   = "etcd"
)

// TLS is what the manifest's etcd job gets: the server certificate (also for peers), the CA that signed
// it and the clients' CA, and the etcdctl client certificate (PEM).
type TLS struct {
	CA, ServerCert, ServerKey, ClientCA, ClientCert, ClientKey []byte
}

// Member is one master instance.
type Member struct {
	*vm.VM
	Index  int
	Domain string // cfcr.internal
	// V2 runs etcd 3.4 as cfcr-etcd runs it for kubo's flanneld: the v2 API on. 3.4 has no
	// --tls-min-version; it accepts TLS 1.2 and later anyway.
	V2 bool
}

// MemberName is etcd's name for the member, the instance's name in BOSH terms.
func (m *Member) MemberName() string { return fmt.Sprintf("master-%d", m.Index) }

// Host is the per-member name that the member advertises.
func (m *Member) Host() string { return fmt.Sprintf("master-%d.etcd.%s", m.Index, m.Domain) }

// ClientURL is the advertised client URL.
func (m *Member) ClientURL() string { return "https://" + m.Host() + ":2379" }

// PeerURL is the advertised peer URL.
func (m *Member) PeerURL() string { return "https://" + m.Host() + ":2380" }

// Install writes the member's certificates and links the etcd package at binDir, as BOSH would lay out the job.
func (m *Member) Install(tls TLS, binDir string) error {
	dir := m.Path(ConfigDir)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return bosherr.WrapErrorf(err, "Creating %s on %s", ConfigDir, m.Name)
	}
	files := map[string][]byte{"ca.crt": tls.CA, "server.crt": tls.ServerCert, "server.key": tls.ServerKey,
		"client-ca.crt": tls.ClientCA, "client.crt": tls.ClientCert, "client.key": tls.ClientKey}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), content, 0o600); err != nil {
			return bosherr.WrapErrorf(err, "Writing %s on %s", name, m.Name)
		}
	}
	link := m.Path("/var/vcap/packages/etcd")
	_ = os.Remove(link)
	return os.Symlink(binDir, link)
}

// Start starts etcd. cluster lists every member of the cluster it joins, itself included;
// state is "new" for the first deploy and "existing" for a member added later.
func (m *Member) Start(cluster []*Member, state string) error {
	var initial []string
	for _, peer := range cluster {
		initial = append(initial, peer.MemberName()+"="+peer.PeerURL())
	}
	addr := m.Address.String()
	args := []string{"/var/vcap/packages/etcd/etcd",
		"--name=" + m.MemberName(),
		"--data-dir=" + dataDir,
		"--listen-client-urls=https://" + addr + ":2379",
		"--advertise-client-urls=" + m.ClientURL(),
		"--listen-peer-urls=https://" + addr + ":2380",
		"--initial-advertise-peer-urls=" + m.PeerURL(),
		"--initial-cluster=" + strings.Join(initial, ","),
		"--initial-cluster-state=" + state,
		"--initial-cluster-token=cfcr-e2e",
		"--client-cert-auth", "--trusted-ca-file=" + ConfigDir + "/client-ca.crt",
		"--cert-file=" + ConfigDir + "/server.crt", "--key-file=" + ConfigDir + "/server.key",
		"--peer-client-cert-auth", "--peer-trusted-ca-file=" + ConfigDir + "/ca.crt",
		"--peer-cert-file=" + ConfigDir + "/server.crt", "--peer-key-file=" + ConfigDir + "/server.key",
	}
	if m.V2 {
		args = append(args, "--enable-v2=true")
	} else {
		args = append(args, "--tls-min-version=TLS1.2")
	}
	return m.VM.Start(process, nil, args...)
}

// WaitHealthy waits until the member answers a health check through its own client URL.
func (m *Member) WaitHealthy(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		_, err := m.Etcdctl("endpoint", "health", "--endpoints="+m.ClientURL())
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return bosherr.WrapErrorf(err, "Member %s not healthy after %s", m.MemberName(), timeout)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// Add registers newcomer with the cluster through m (cfcr-etcd runs `member add` before starting).
func (m *Member) Add(newcomer *Member) error {
	return m.reconfigure("member", "add", newcomer.MemberName(), "--peer-urls="+newcomer.PeerURL())
}

// reconfigure runs a membership change. etcd refuses one while any member has been connected for less
// than a few seconds ("unhealthy cluster"), so it is retried for a while, as cfcr-etcd does.
func (m *Member) reconfigure(args ...string) error {
	deadline := time.Now().Add(time.Minute)
	for {
		_, err := m.Etcdctl(args...)
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(time.Second)
	}
}

// Drain removes the member from the cluster (cfcr-etcd's drain), asking through peer, and stops etcd.
// A removed member shuts itself down, which can cut the answer to a remove that worked, so each try
// first looks whether the member is still listed.
func (m *Member) Drain(peer *Member) error {
	deadline := time.Now().Add(time.Minute)
	for {
		id, err := peer.memberID(m.MemberName())
		if err == nil && id == "" {
			m.VM.Stop(process, 10*time.Second)
			return nil
		}
		if err == nil {
			_, err = peer.Etcdctl("member", "remove", id)
		}
		if err != nil && time.Now().After(deadline) {
			return err
		}
		if err != nil {
			time.Sleep(time.Second)
		}
	}
}

// Etcdctl runs etcdctl on the member's VM with the client certificate, against its own client URL
// unless args name other endpoints.
func (m *Member) Etcdctl(args ...string) (string, error) {
	full := []string{"/var/vcap/packages/etcd/etcdctl", "--endpoints=" + m.ClientURL(),
		"--cacert=" + ConfigDir + "/ca.crt", "--cert=" + ConfigDir + "/client.crt",
		"--key=" + ConfigDir + "/client.key", "--command-timeout=5s"}
	return m.Run(append(full, args...)...)
}

// memberID is the hex ID of the member named name, "" if the cluster does not list it.
func (m *Member) memberID(name string) (string, error) {
	out, err := m.Etcdctl("member", "list", "-w", "json")
	if err != nil {
		return "", err
	}
	var list struct {
		Members []struct {
			ID   uint64 `json:"ID"`
			Name string `json:"name"`
		} `json:"members"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		return "", bosherr.WrapErrorf(err, "Parsing member list from %s", m.MemberName())
	}
	for _, member := range list.Members {
		if member.Name == name {
			return fmt.Sprintf("%x", member.ID), nil
		}
	}
	return "", nil
}

// Running tells whether etcd runs on the member.
func (m *Member) Running() bool { return m.PID(process) != 0 && syscall.Kill(m.PID(process), 0) == nil }

// Halt stops etcd as a crash or `monit stop` would, keeping its data directory for Resume.
func (m *Member) Halt() { m.VM.Stop(process, 10*time.Second) }

// Resume starts etcd again on the data directory it had: the member rejoins its cluster. The initial-cluster
// flags are ignored by etcd then; cluster is passed only because Start needs one. A member whose etcd was
// not halted is left alone.
func (m *Member) Resume(cluster []*Member) error {
	if m.PID(process) != 0 {
		return nil
	}
	return m.Start(cluster, "existing")
}

// Kill sends SIGKILL to etcd, as a crash would (its kernel resets the clients' connections), and waits until
// the process is gone. The data directory stays for Resume.
func (m *Member) Kill() error {
	pid := m.PID(process)
	if pid == 0 {
		return bosherr.Errorf("No etcd process on %s to kill", m.Name)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		return bosherr.WrapErrorf(err, "Killing etcd (pid %d) on %s", pid, m.Name)
	}
	deadline := time.Now().Add(10 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			return bosherr.Errorf("etcd (pid %d) on %s still there 10s after SIGKILL", pid, m.Name)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Forget the dead process, so that Resume starts etcd again; its process group is gone with it, so the
	// signals Stop sends reach no one.
	m.VM.Stop(process, 0)
	return nil
}

// Boot starts etcd as cfcr-etcd's start does, then waits until the member is healthy: on the data directory
// it has; with none, as the first member of a new cluster when no peer runs, or else after `member add`
// through a running peer, in the cluster of the running peers. A member whose etcd runs is left alone.
func (m *Member) Boot(peers []*Member, timeout time.Duration) error {
	if m.PID(process) != 0 {
		return nil
	}
	if _, err := os.Stat(m.Path(dataDir + "/member")); err == nil {
		return m.startHealthy(peers, "existing", timeout)
	}
	var running []*Member
	for _, p := range peers {
		if p != m && p.PID(process) != 0 {
			running = append(running, p)
		}
	}
	if len(running) == 0 {
		return m.startHealthy([]*Member{m}, "new", timeout)
	}
	if err := running[0].Add(m); err != nil {
		return err
	}
	return m.startHealthy(append(running, m), "existing", timeout)
}

func (m *Member) startHealthy(cluster []*Member, state string, timeout time.Duration) error {
	if err := m.Start(cluster, state); err != nil {
		return err
	}
	return m.WaitHealthy(timeout)
}
