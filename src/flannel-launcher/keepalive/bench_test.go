package keepalive_test

import (
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	boshlog "github.com/cloudfoundry/bosh-utils/logger"
	"github.com/onsi/gomega/gexec"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/keepalive"
	"github.com/flannel-dns/flannel-dns/src/testenv/tcpserver"
)

// BenchmarkSteadyStateCycle measures a Cycle that finds nothing new: the launcher's cost per tick while flanneld
// keeps its connections. One tcpholder plays flanneld with 3 connections to the etcd port; another holds 500
// connections elsewhere, which a cycle must not have to read about (docs/failover.md).
func BenchmarkSteadyStateCycle(b *testing.B) {
	flanneld, etcd := benchFlanneld(b)
	tuner := keepalive.NewTuner(benchProcess(b, flanneld), etcd.Port, keepalive.DefaultSettings(), boshlog.NewLogger(boshlog.LevelNone))
	if count, err := tuner.Cycle(); err != nil || count != 3 {
		b.Fatalf("first cycle tuned %d sockets (want 3): %v", count, err)
	}

	for b.Loop() {
		if count, err := tuner.Cycle(); err != nil || count != 0 {
			b.Fatalf("steady-state cycle tuned %d sockets (want 0): %v", count, err)
		}
	}
}

// BenchmarkSteadyStateReaperCycle measures a Reaper cycle while nothing changes: flanneld's 3 connections to
// the etcd port (one peer, on loopback, which answers ICMP) and 500 connections elsewhere in the namespace. A
// cycle lists /proc/<pid>/fd, reads the echo replies and sends one echo per peer; it dumps no socket table and
// reads no TCP info, since the peer answers.
func BenchmarkSteadyStateReaperCycle(b *testing.B) {
	flanneld, etcd := benchFlanneld(b)
	process := benchProcess(b, flanneld)
	reaper, err := keepalive.NewReaper(process, etcd.Port, boshlog.NewLogger(boshlog.LevelNone), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { reaper.Close() })
	if _, err := reaper.Cycle(); err != nil { // the dump, outside the measure: it would be shared out over b.N
		b.Fatal(err)
	}

	for b.Loop() {
		if destroyed, err := reaper.Cycle(); err != nil || destroyed != 0 {
			b.Fatalf("steady-state cycle destroyed %d connections (want 0): %v", destroyed, err)
		}
	}
	if reaper.Dumps() != 1 {
		b.Fatalf("%d socket table dumps (want 1, at the first cycle, before the measure)", reaper.Dumps())
	}
}

// BenchmarkSocketTableDump measures what a Reaper cycle costs when flanneld's sockets have changed: one dump
// of the namespace's IPv4 TCP sockets, here with 500 connections besides flanneld's 3.
func BenchmarkSocketTableDump(b *testing.B) {
	flanneld, etcd := benchFlanneld(b)
	process := benchProcess(b, flanneld)

	for b.Loop() {
		reaper, err := keepalive.NewReaper(process, etcd.Port, boshlog.NewLogger(boshlog.LevelNone), nil)
		if err != nil {
			b.Fatal(err)
		}
		_, err = reaper.Cycle()
		reaper.Close()
		if err != nil {
			b.Fatal(err)
		}
	}
}

// benchFlanneld starts a tcpholder playing flanneld with 3 connections to an etcd port, and another holding
// 500 connections elsewhere, all on loopback. It returns the first's PID and its peer.
func benchFlanneld(b *testing.B) (int, *net.TCPAddr) {
	holder, err := gexec.Build("github.com/flannel-dns/flannel-dns/src/flannel-launcher/keepalive/testdata/tcpholder")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(gexec.CleanupBuildArtifacts)
	etcd := benchListener(b)
	other := benchListener(b)
	flanneld := benchHolder(b, holder, etcd, 3)
	benchHolder(b, holder, other, 500)
	return flanneld, etcd
}

// benchProcess takes a handle on pid for the benchmark.
func benchProcess(b *testing.B, pid int) *keepalive.Process {
	process, err := keepalive.OpenProcess(pid)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { process.Close() })
	return process
}

// benchHolder starts tcpholder with n connections to addr and returns its PID once they are up.
func benchHolder(b *testing.B, path string, addr *net.TCPAddr, n int) int {
	args := []string{"dial"}
	for range n {
		args = append(args, addr.String())
	}
	session, err := gexec.Start(exec.Command(path, args...), nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { <-session.Kill().Exited })
	for !strings.Contains(string(session.Out.Contents()), "ready") {
		select {
		case <-session.Exited:
			b.Fatalf("tcpholder exited: %s", session.Err.Contents())
		case <-time.After(10 * time.Millisecond):
		}
	}
	return session.Command.Process.Pid
}

func benchListener(b *testing.B) *net.TCPAddr {
	server, err := tcpserver.Start("127.0.0.1:0", nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(server.Close)
	return server.Addr()
}
