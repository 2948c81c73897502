package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"

	"github.com/flannel-dns/flannel-dns/src/testenv/loopback"
	"github.com/flannel-dns/flannel-dns/src/testenv/pki"
)

// etcd is a cluster of real etcd processes on loopback addresses, each with its own CPU to read: the leader's
// load is one of the figures, and in-process members would share the harness's process.
type etcd struct {
	bin     string
	alias   string
	port    int // every member's client port, as behind a bosh-dns alias
	members []*member
	dir     string
	token   string
	cpu     int // the CPU every member is pinned to; -1: not pinned
}

type member struct {
	name, host string
	ip         net.IP
	peerPort   int
	metricPort int
	server     pki.Pair
	caFile     string
	dataDir    string
	logFile    string
	cmd        *exec.Cmd
	exited     chan struct{}
}

// startEtcd starts size members of the etcd in binDir with client TLS (client certificates required) and
// returns once every member serves its health endpoint.
func startEtcd(binDir, dir string, ca *pki.CA, alias string, size, cpu int) (*etcd, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, bosherr.WrapErrorf(err, "Creating %s", dir)
	}
	ips := loopback.IPs(size)
	port, err := loopback.FreePort(ips)
	if err != nil {
		return nil, err
	}
	e := &etcd{bin: filepath.Join(binDir, "etcd"), alias: alias, port: port, dir: dir, token: filepath.Base(dir), cpu: cpu}
	for i, ip := range ips {
		m := &member{name: fmt.Sprintf("member-%d", i), ip: ip, caFile: ca.CertFile,
			dataDir: filepath.Join(dir, fmt.Sprintf("member-%d", i)), logFile: filepath.Join(dir, fmt.Sprintf("member-%d.log", i))}
		m.host = m.name + "." + alias
		if m.peerPort, err = loopback.FreePort([]net.IP{ip}); err != nil {
			return nil, err
		}
		if m.metricPort, err = loopback.FreePort([]net.IP{ip}); err != nil {
			return nil, err
		}
		if m.server, err = ca.Issue(pki.Server(m.name, []string{alias, m.host}, []net.IP{ip})); err != nil {
			return nil, err
		}
		e.members = append(e.members, m)
	}
	for _, m := range e.members {
		if err := e.start(m, "new"); err != nil {
			e.stop()
			return nil, err
		}
	}
	for _, m := range e.members {
		if err := e.waitHealthy(m); err != nil {
			e.stop()
			return nil, err
		}
	}
	return e, nil
}

func (e *etcd) args(m *member, state string) []string {
	peers := make([]string, len(e.members))
	for i, p := range e.members {
		peers[i] = fmt.Sprintf("%s=http://%s", p.name, net.JoinHostPort(p.ip.String(), strconv.Itoa(p.peerPort)))
	}
	peerURL := "http://" + net.JoinHostPort(m.ip.String(), strconv.Itoa(m.peerPort))
	return []string{
		"--name", m.name, "--data-dir", m.dataDir,
		"--listen-client-urls", "https://" + net.JoinHostPort(m.ip.String(), strconv.Itoa(e.port)),
		"--advertise-client-urls", m.clientURL(e.port),
		"--listen-peer-urls", peerURL, "--initial-advertise-peer-urls", peerURL,
		"--initial-cluster", strings.Join(peers, ","), "--initial-cluster-token", e.token,
		"--initial-cluster-state", state,
		"--cert-file", m.server.CertFile, "--key-file", m.server.KeyFile,
		"--trusted-ca-file", m.caFile, "--client-cert-auth",
		// Plain HTTP on loopback for the harness only: every client request goes through mutual TLS.
		"--listen-metrics-urls", m.metricsURL(),
		"--metrics", "extensive", // grpc_server_handling_seconds, the request latency figure
		"--log-level", "warn",
	}
}

func (m *member) clientURL(port int) string {
	return "https://" + net.JoinHostPort(m.host, strconv.Itoa(port))
}

// ipURL is the member's client URL by address, for clients that do not ask the harness's DNS server.
func (m *member) ipURL(port int) string {
	return "https://" + net.JoinHostPort(m.ip.String(), strconv.Itoa(port))
}

func (m *member) metricsURL() string {
	return "http://" + net.JoinHostPort(m.ip.String(), strconv.Itoa(m.metricPort))
}

func (e *etcd) start(m *member, state string) error {
	log, err := os.OpenFile(m.logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return bosherr.WrapErrorf(err, "Opening the log of %s", m.name)
	}
	defer log.Close()
	m.cmd = exec.Command(e.bin, e.args(m, state)...)
	m.cmd.Stdout, m.cmd.Stderr = log, log
	if err := m.cmd.Start(); err != nil {
		return bosherr.WrapErrorf(err, "Starting etcd %s", m.name)
	}
	m.exited = make(chan struct{})
	go func(cmd *exec.Cmd, exited chan struct{}) {
		_ = cmd.Wait() // killed by the harness or failed; the log says which
		close(exited)
	}(m.cmd, m.exited)
	return nil
}

// waitHealthy waits until m serves, then pins it.
func (e *etcd) waitHealthy(m *member) error {
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		select {
		case <-m.exited:
			return bosherr.Errorf("etcd %s exited; see %s", m.name, m.logFile)
		default:
		}
		if text, err := scrape(context.Background(), m.metricsURL()+"/health"); err == nil && strings.Contains(text, `"true"`) {
			if e.cpu < 0 {
				return nil
			}
			return pin(m.cmd.Process.Pid, e.cpu)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return bosherr.Errorf("etcd %s not healthy after a minute; see %s", m.name, m.logFile)
}

// kill sends SIGKILL to member i, as a VM that dies does, and waits until it is gone.
func (e *etcd) kill(i int) {
	m := e.members[i]
	if m.cmd == nil {
		return
	}
	_ = m.cmd.Process.Signal(syscall.SIGKILL) // already gone is fine
	<-m.exited
	m.cmd = nil
}

// restart starts member i again on its data and waits until it is healthy.
func (e *etcd) restart(i int) error {
	if err := e.start(e.members[i], "existing"); err != nil {
		return err
	}
	return e.waitHealthy(e.members[i])
}

func (e *etcd) stop() {
	for i := range e.members {
		e.kill(i)
	}
}

// leader is the index of the member that reports itself leader in its metrics, or -1.
func (e *etcd) leader(ctx context.Context) int {
	for i, m := range e.members {
		if m.cmd == nil {
			continue
		}
		snap, err := readMetrics(ctx, m)
		if err == nil && snap.gauge("etcd_server_is_leader") == 1 {
			return i
		}
	}
	return -1
}

// waitLeader waits until some member is leader.
func (e *etcd) waitLeader() (int, error) {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if i := e.leader(context.Background()); i >= 0 {
			return i, nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return -1, bosherr.Error("No etcd leader after 30 s")
}

func (e *etcd) pid(i int) int {
	if e.members[i].cmd == nil {
		return 0
	}
	return e.members[i].cmd.Process.Pid
}

// endpoints are the members' client URLs by address.
func (e *etcd) endpoints() []string {
	urls := make([]string, len(e.members))
	for i, m := range e.members {
		urls[i] = m.ipURL(e.port)
	}
	return urls
}

func (e *etcd) ips() []net.IP {
	ips := make([]net.IP, len(e.members))
	for i, m := range e.members {
		ips[i] = m.ip
	}
	return ips
}
