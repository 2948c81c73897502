// Package etcdv2 runs Debian's etcd 3.4 (scripts/unpack-etcd-3.4) as a child process for tests, as cfcr-etcd
// runs it for kubo's flanneld: one member (or a cluster of several) on a loopback address, the v2 API on
// (--enable-v2=true) beside v3, client TLS with mandatory client certificates. Put writes v2 keys as kubo's
// flanneld does.
//
//	member, err := etcdv2.Start(ca, []string{"etcd.test.internal"})
//	defer member.Close()
//	err = member.Put("/coreos.com/network/subnets/198.18.7.0-24", `{"PublicIP":"192.0.2.7"}`, 3600)
//	members, err := etcdv2.StartCluster(ca, []string{"etcd.test.internal"}, 3) // members[1].Stop(), .Restart()
package etcdv2

import (
	"github.com/flannel-dns/flannel-dns/src/testenv/cache"

	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"

	"github.com/flannel-dns/flannel-dns/src/testenv/loopback"
	"github.com/flannel-dns/flannel-dns/src/testenv/pki"
)

// Binary is where scripts/unpack-etcd-3.4 puts etcd 3.4: ${FLANNEL_DNS_CACHE:-/var/cache/flannel-dns}/etcd-3.4/etcd.
func Binary() string {
	return cache.Path("etcd-3.4", "etcd")
}

// Member is a running etcd 3.4.
type Member struct {
	Name   string
	IP     net.IP
	Port   int
	URL    string       // https://<ip>:<port>
	Client *http.Client // mutual TLS, for the v2 API
	peer   string
	dir    string
	args   []string
	cmd    *exec.Cmd
	exited chan struct{}
}

// Start runs etcd 3.4 with a server certificate from ca for its address and dnsNames, trusting ca for
// clients, and returns once it answers.
func Start(ca *pki.CA, dnsNames []string) (*Member, error) {
	members, err := StartCluster(ca, dnsNames, 1)
	if err != nil {
		return nil, err
	}
	return members[0], nil
}

// StartCluster runs size members of one cluster as Start runs one, each on a loopback address of its own and all
// on the same client port (one alias can name them all), and returns once every one answers.
func StartCluster(ca *pki.CA, dnsNames []string, size int) ([]*Member, error) {
	if _, err := os.Stat(Binary()); err != nil {
		return nil, bosherr.WrapErrorf(err, "No etcd 3.4 at %s (scripts/unpack-etcd-3.4 puts it there)", Binary())
	}
	members, err := plan(size)
	if err != nil {
		closeAll(members)
		return nil, err
	}
	var initial []string
	for _, m := range members {
		initial = append(initial, m.Name+"="+m.peer)
	}
	for _, m := range members {
		if err := m.start(ca, dnsNames, strings.Join(initial, ",")); err != nil {
			closeAll(members)
			return nil, err
		}
	}
	for _, m := range members {
		if err := m.waitReady(time.Minute); err != nil {
			closeAll(members)
			return nil, err
		}
	}
	return members, nil
}

func plan(size int) ([]*Member, error) {
	ips := loopback.IPs(size)
	port, err := loopback.FreePort(ips)
	if err != nil {
		return nil, err
	}
	var members []*Member
	for i, ip := range ips {
		peerPort, err := loopback.FreePort([]net.IP{ip})
		if err != nil {
			return members, err
		}
		dir, err := os.MkdirTemp("", "etcdv2-")
		if err != nil {
			return members, bosherr.WrapError(err, "Creating the data directory")
		}
		members = append(members, &Member{Name: fmt.Sprintf("member-%d", i), IP: ip, Port: port, dir: dir,
			URL:  "https://" + net.JoinHostPort(ip.String(), strconv.Itoa(port)),
			peer: "http://" + net.JoinHostPort(ip.String(), strconv.Itoa(peerPort))})
	}
	return members, nil
}

func closeAll(members []*Member) {
	for _, m := range members {
		m.Close()
	}
}

func (m *Member) start(ca *pki.CA, dnsNames []string, initialCluster string) error {
	server, err := ca.Issue(pki.Server("etcd34-"+m.Name, dnsNames, []net.IP{m.IP}))
	if err != nil {
		return err
	}
	if m.Client, err = client(ca); err != nil {
		return err
	}
	m.args = []string{"--name=" + m.Name, "--data-dir=" + filepath.Join(m.dir, "data"),
		"--listen-client-urls=" + m.URL, "--advertise-client-urls=" + m.URL,
		"--listen-peer-urls=" + m.peer, "--initial-advertise-peer-urls=" + m.peer, "--initial-cluster=" + initialCluster,
		"--client-cert-auth", "--trusted-ca-file=" + ca.CertFile, "--cert-file=" + server.CertFile, "--key-file=" + server.KeyFile,
		"--enable-v2=true", "--logger=zap", "--log-outputs=" + filepath.Join(m.dir, "etcd.log")}
	return m.run()
}

func (m *Member) run() error {
	m.cmd = exec.Command(Binary(), m.args...)
	m.exited = make(chan struct{})
	if err := m.cmd.Start(); err != nil {
		return bosherr.WrapErrorf(err, "Starting %s", Binary())
	}
	go func(cmd *exec.Cmd, exited chan struct{}) { _ = cmd.Wait(); close(exited) }(m.cmd, m.exited)
	return nil
}

// Stop kills the member (by its PID) and keeps its data for Restart.
func (m *Member) Stop() {
	if m.cmd != nil && m.cmd.Process != nil {
		_ = m.cmd.Process.Kill()
		<-m.exited
	}
	m.cmd = nil
}

// Restart runs a stopped member again on its data; it answers once its cluster has a quorum again, which
// WaitReady waits for.
func (m *Member) Restart() error {
	m.Stop()
	return m.run()
}

// WaitReady waits until the member's /health says it serves (its cluster has a leader).
func (m *Member) WaitReady(timeout time.Duration) error {
	return m.waitReady(timeout)
}

func client(ca *pki.CA) (*http.Client, error) {
	pair, err := ca.Issue(pki.Client("etcdv2-test"))
	if err != nil {
		return nil, err
	}
	cert, err := tls.LoadX509KeyPair(pair.CertFile, pair.KeyFile)
	if err != nil {
		return nil, bosherr.WrapError(err, "Loading the test client's certificate")
	}
	caPEM, err := os.ReadFile(ca.CertFile)
	if err != nil {
		return nil, bosherr.WrapError(err, "Reading the CA")
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	tlsConfig := &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	return &http.Client{Transport: &http.Transport{TLSClientConfig: tlsConfig}, Timeout: 10 * time.Second}, nil
}

func (m *Member) waitReady(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		resp, err := m.Client.Get(m.URL + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-m.exited:
			return bosherr.Errorf("etcd 3.4 exited at start; see %s", filepath.Join(m.dir, "etcd.log"))
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return bosherr.Errorf("etcd 3.4 at %s not healthy after %s: %v", m.URL, timeout, err)
		}
	}
}

// Put sets a v2 key (ttl 0: none), as kubo's flanneld and etcdctl's v2 `set` do.
func (m *Member) Put(key, value string, ttl int) error {
	form := url.Values{"value": {value}}
	if ttl > 0 {
		form.Set("ttl", strconv.Itoa(ttl))
	}
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPut, m.URL+"/v2/keys"+key, strings.NewReader(form.Encode()))
	if err != nil {
		return bosherr.WrapErrorf(err, "Putting '%s'", key)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := m.Client.Do(req)
	if err != nil {
		return bosherr.WrapErrorf(err, "Putting '%s'", key)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusCreated {
		return bosherr.Errorf("Putting '%s': %d %s", key, resp.StatusCode, body)
	}
	return nil
}

// V2Index is the v2 store's index (X-Etcd-Index), which every v2 write raises: unchanged means nothing was written.
func (m *Member) V2Index() (int, error) {
	resp, err := m.Client.Get(m.URL + "/v2/keys/")
	if err != nil {
		return 0, bosherr.WrapError(err, "Reading the v2 index")
	}
	resp.Body.Close()
	return strconv.Atoi(resp.Header.Get("X-Etcd-Index"))
}

// Close stops etcd (by its PID) and removes its data.
func (m *Member) Close() {
	m.Stop()
	_ = os.RemoveAll(m.dir)
}

// String names the member in failure messages.
func (m *Member) String() string { return fmt.Sprintf("etcd 3.4 at %s", m.URL) }

// EnableAuth turns the v2 store's authentication on as cfcr-etcd 1.11's post-start does for a manifest's
// `users`: a root user, and a user named like a client certificate's CN with a role that may read and write
// pattern (such as "/coreos.com/network/*") only. etcd takes a client certificate's CN as the v2 user; Put and
// the member's own client go on as root afterwards.
func (m *Member) EnableAuth(user, pattern string) error {
	const rootPassword = "etcdv2-test-root"
	role := user + "-role"
	steps := []struct{ path, body string }{
		{"/v2/auth/users/root", `{"user":"root","password":"` + rootPassword + `"}`},
		{"/v2/auth/roles/" + role, `{"role":"` + role + `","permissions":{"kv":{"read":["` + pattern + `"],"write":["` + pattern + `"]}}}`},
		{"/v2/auth/users/" + user, `{"user":"` + user + `","password":"unused","roles":["` + role + `"]}`},
		{"/v2/auth/enable", ``},
	}
	for _, step := range steps {
		if err := m.authPut(step.path, step.body); err != nil {
			return err
		}
	}
	m.Client.Transport = &basicAuth{next: m.Client.Transport, user: "root", password: rootPassword}
	return nil
}

func (m *Member) authPut(path, body string) error {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPut, m.URL+path, strings.NewReader(body))
	if err != nil {
		return bosherr.WrapErrorf(err, "Setting up v2 auth: %s", path)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := m.Client.Do(req)
	if err != nil {
		return bosherr.WrapErrorf(err, "Setting up v2 auth: %s", path)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		return bosherr.Errorf("Setting up v2 auth: %s: %d %s", path, resp.StatusCode, answer)
	}
	return nil
}

// basicAuth adds a user and password to every request.
type basicAuth struct {
	next           http.RoundTripper
	user, password string
}

func (b *basicAuth) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.SetBasicAuth(b.user, b.password)
	return b.next.RoundTrip(req)
}
