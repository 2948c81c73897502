package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"

	"github.com/flannel-dns/flannel-dns/src/testenv/dnsserver"
	"github.com/flannel-dns/flannel-dns/src/testenv/loopback"
	"github.com/flannel-dns/flannel-dns/src/testenv/recordingflanneld/record"
)

// dnsRate is what a herd's launchers asked the DNS server over a window once every flanneld ran.
type dnsRate struct {
	n        int
	window   time.Duration
	queries  int     // for the alias, UDP and TCP, all launchers
	perNode  float64 // queries per second per launcher
	interval time.Duration
}

func (h *harness) measureDNSRate(n int, window time.Duration) dnsRate {
	count := func() int { return h.dns.Queries(h.etcd.alias, "udp") + h.dns.Queries(h.etcd.alias, "tcp") }
	before := count()
	time.Sleep(window)
	queries := count() - before
	return dnsRate{n: n, window: window, queries: queries, interval: h.launcherConfig("", h.dir).Timing.ResolveInterval.D(),
		perNode: float64(queries) / float64(n) / window.Seconds()}
}

// traced is one launcher run under strace with the resolver in its default place, a resolv.conf (here its own
// file naming a DNS server on port 53 of a loopback address): where it connected and sent, and which
// resolver files it opened, from its start through window.
type traced struct {
	window       time.Duration
	resolvConf   string
	nameserver   string
	destinations map[string]int // host:port -> connects and sends
	etcdConnects int            // connections to an etcd member's client port: the launcher's start only
	opened       []string       // files under /etc, and the resolv.conf it was given
}

// traceLauncher runs one launcher under `strace -f`, with flanneld, for window, then stops it.
func (h *harness) traceLauncher(window time.Duration) (traced, error) {
	dir := filepath.Join(h.dir, "traced")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return traced{}, bosherr.WrapErrorf(err, "Creating %s", dir)
	}
	server, err := dnsserver.StartAt(net.JoinHostPort(loopback.IPs(1)[0].String(), "53"))
	if err != nil {
		return traced{}, err
	}
	defer server.Close()
	h.etcd.publish(server)
	nameserver, _, _ := net.SplitHostPort(server.Addr)
	t := traced{window: window, resolvConf: filepath.Join(dir, "resolv.conf"), nameserver: nameserver}
	if err := os.WriteFile(t.resolvConf, []byte("nameserver "+nameserver+"\n"), 0o644); err != nil {
		return t, bosherr.WrapError(err, "Writing the traced launcher's resolv.conf")
	}
	cfg := h.launcherConfig("/traced/coreos.com/network", dir)
	cfg.DNS.Server, cfg.DNS.ResolvConf = "", t.resolvConf
	if err := writeConfig(filepath.Join(dir, "config.json"), cfg); err != nil {
		return t, err
	}
	traceFile := filepath.Join(dir, "strace.txt")
	cmd := exec.Command("strace", "-f", "-qq", "-o", traceFile, "-e", "trace=connect,sendto,sendmsg,openat",
		h.launcher, "run", "--config", filepath.Join(dir, "config.json"))
	cmd.Env = append(os.Environ(), record.FileEnv+"="+filepath.Join(dir, "record.json"))
	if err := cmd.Start(); err != nil {
		return t, bosherr.WrapError(err, "Starting strace")
	}
	time.Sleep(window)
	stopTraced(cmd)
	trace, err := os.ReadFile(traceFile)
	if err != nil {
		return t, bosherr.WrapErrorf(err, "Reading %s", traceFile)
	}
	t.parse(string(trace), h.etcd.port)
	return t, nil
}

// stopTraced sends SIGTERM to the launcher, strace's child, so that it stops flanneld as on a job stop, and
// waits for strace to end.
func stopTraced(cmd *exec.Cmd) {
	children, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", cmd.Process.Pid, cmd.Process.Pid))
	for _, field := range strings.Fields(string(children)) {
		if pid, err := strconv.Atoi(field); err == nil {
			_ = syscall.Kill(pid, syscall.SIGTERM) // gone already is fine
		}
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }() // the trace says how it ended
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
}

var (
	inetAddr = regexp.MustCompile(`sa_family=AF_INET6?, sin6?_port=htons\((\d+)\).*?(?:inet_addr\("([^"]+)"\)|inet_pton\(AF_INET6, "([^"]+)")`)
	openedAt = regexp.MustCompile(`openat\([^,]+, "([^"]+)"`)
)

// parse reads strace's lines: every IPv4/IPv6 destination of connect, sendto and sendmsg, and the files under
// /etc and the resolv.conf opened. recordingflanneld, traced too, connects nowhere: every connection is the
// launcher's.
func (t *traced) parse(trace string, etcdPort int) {
	t.destinations = map[string]int{}
	for _, line := range strings.Split(trace, "\n") {
		if m := openedAt.FindStringSubmatch(line); m != nil {
			if strings.HasPrefix(m[1], "/etc/") || m[1] == t.resolvConf {
				t.opened = append(t.opened, m[1])
			}
			continue
		}
		m := inetAddr.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		port, _ := strconv.Atoi(m[1])
		t.destinations[net.JoinHostPort(m[2]+m[3], m[1])]++
		if port == etcdPort && strings.Contains(line, "connect(") {
			t.etcdConnects++
		}
	}
}

// publish puts the alias and the members' names on a DNS server.
func (e *etcd) publish(server *dnsserver.Server) {
	server.SetAddresses(e.alias, e.ips()...)
	for _, m := range e.members {
		server.SetAddresses(m.host, m.ip)
	}
}
