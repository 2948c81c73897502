// Package impostor is a TLS listener that poses as an etcd member on the simulated network: its certificate
// names the etcd alias and a member, but it is signed by another CA. It counts, on its own side, the
// connections it accepted and the handshakes that completed: a client that verifies etcd's CA completes none.
package impostor

import (
	"crypto/tls"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"

	"github.com/flannel-dns/flannel-dns/src/e2e/network"
	"github.com/flannel-dns/flannel-dns/src/testenv/pki"
)

// handshakeTimeout bounds a client that connects and never speaks.
const handshakeTimeout = 5 * time.Second

// Listener is the impostor.
type Listener struct {
	addr       netip.AddrPort
	ln         net.Listener
	wg         sync.WaitGroup
	accepted   atomic.Int64
	handshakes atomic.Int64
	mu         sync.Mutex
	failures   []string
}

// Start creates a CA of its own in dir, issues itself a certificate for names and addr's address, and
// listens on addr inside network namespace ns ("" for the caller's own). It asks for a client certificate
// and accepts any, so that a client that does not verify the server would complete the handshake.
func Start(ns string, addr netip.AddrPort, names []string, dir string) (*Listener, error) {
	ca, err := pki.NewCA(dir, "impostor-ca")
	if err != nil {
		return nil, err
	}
	pair, err := ca.Issue(pki.Server("impostor", names, []net.IP{net.IP(addr.Addr().AsSlice())}))
	if err != nil {
		return nil, err
	}
	cert, err := tls.LoadX509KeyPair(pair.CertFile, pair.KeyFile)
	if err != nil {
		return nil, bosherr.WrapErrorf(err, "Loading the impostor's certificate %s", pair.CertFile)
	}
	ln, err := listenIn(ns, addr)
	if err != nil {
		return nil, err
	}
	l := &Listener{addr: addr, ln: tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{cert},
		ClientAuth: tls.RequestClientCert, MinVersion: tls.VersionTLS12})}
	l.wg.Add(1)
	go l.serve()
	return l, nil
}

// Addr is where it listens.
func (l *Listener) Addr() netip.AddrPort { return l.addr }

// Accepted counts the TCP connections accepted so far.
func (l *Listener) Accepted() int64 { return l.accepted.Load() }

// Handshakes counts the TLS handshakes that completed on the impostor's side.
func (l *Listener) Handshakes() int64 { return l.handshakes.Load() }

// Failures are the impostor's own handshake errors, the client's refusal as the server saw it.
func (l *Listener) Failures() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.failures...)
}

// Close stops listening and waits for the connections being served.
func (l *Listener) Close() {
	_ = l.ln.Close()
	l.wg.Wait()
}

func (l *Listener) serve() {
	defer l.wg.Done()
	for {
		conn, err := l.ln.Accept()
		if err != nil {
			return // closed
		}
		l.accepted.Add(1)
		l.wg.Add(1)
		go l.handshake(conn.(*tls.Conn))
	}
}

func (l *Listener) handshake(conn *tls.Conn) {
	defer l.wg.Done()
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(handshakeTimeout))
	if err := conn.Handshake(); err != nil {
		l.mu.Lock()
		l.failures = append(l.failures, err.Error())
		l.mu.Unlock()
		return
	}
	l.handshakes.Add(1)
}

// listenIn opens the listening socket from a thread moved into ns; the socket stays in ns afterwards, and
// the thread, locked and never unlocked, ends with its goroutine instead of going back to the runtime.
func listenIn(ns string, addr netip.AddrPort) (net.Listener, error) {
	if ns == "" {
		ln, err := net.Listen("tcp", addr.String())
		if err != nil {
			return nil, bosherr.WrapErrorf(err, "Listening on %s", addr)
		}
		return ln, nil
	}
	var ln net.Listener
	err := network.InNamespace(ns, func() error {
		var err error
		if ln, err = net.Listen("tcp", addr.String()); err != nil {
			return bosherr.WrapErrorf(err, "Listening on %s in %s", addr, ns)
		}
		return nil
	})
	return ln, err
}
