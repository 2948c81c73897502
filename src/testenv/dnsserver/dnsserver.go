// Package dnsserver is a real DNS server for tests, on a loopback address over UDP and TCP. It answers A and
// AAAA queries for the names a test sets, with TTL 0, and can be changed while a test runs.
//
//	server, err := dnsserver.Start()
//	server.SetAddresses("etcd.test.internal", ip1, ip2) // no addresses: an empty answer
//	server.SetRcode("etcd.test.internal", dns.RcodeServerFailure)
//	server.SetSilent("etcd.test.internal")              // never answers
//	server.Remove("etcd.test.internal")                 // NXDOMAIN, as for any unknown name
//	server.Queries("etcd.test.internal", "tcp")
package dnsserver

import (
	"net"
	"strings"
	"sync"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
	"github.com/miekg/dns"

	"github.com/flannel-dns/flannel-dns/src/testenv/loopback"
)

// Server answers on Addr (host:port) over UDP and TCP until Close.
type Server struct {
	Addr string

	udp *dns.Server
	tcp *dns.Server

	closeOnce sync.Once
	closeErr  error

	mu      sync.Mutex
	names   map[string]record
	queries map[string]int // by name and network
}

type record struct {
	ips    []net.IP
	rcode  int
	silent bool
}

// Start listens on a random loopback address.
func Start() (*Server, error) {
	packetConn, listener, err := listen()
	if err != nil {
		return nil, err
	}
	return serve(packetConn, listener)
}

// StartAt listens on addr (host:port), such as port 53 of a loopback address, which a resolv.conf can name.
func StartAt(addr string) (*Server, error) {
	listener, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, bosherr.WrapErrorf(err, "Listening on TCP %s", addr)
	}
	packetConn, err := net.ListenPacket("udp", addr)
	if err != nil {
		listener.Close()
		return nil, bosherr.WrapErrorf(err, "Listening on UDP %s", addr)
	}
	return serve(packetConn, listener)
}

func serve(packetConn net.PacketConn, listener net.Listener) (*Server, error) {
	s := &Server{Addr: listener.Addr().String(), names: map[string]record{}, queries: map[string]int{}}
	s.udp = &dns.Server{PacketConn: packetConn, Handler: dns.HandlerFunc(s.serve)}
	s.tcp = &dns.Server{Listener: listener, Handler: dns.HandlerFunc(s.serve)}
	if err := activate(s.udp); err != nil {
		return nil, err
	}
	if err := activate(s.tcp); err != nil {
		_ = s.udp.Shutdown() // the TCP error is the one to report
		return nil, err
	}
	return s, nil
}

func listen() (net.PacketConn, net.Listener, error) {
	for range 20 {
		listener, err := net.Listen("tcp", net.JoinHostPort(loopback.IPs(1)[0].String(), "0"))
		if err != nil {
			return nil, nil, bosherr.WrapError(err, "Listening on TCP")
		}
		packetConn, err := net.ListenPacket("udp", listener.Addr().String())
		if err == nil {
			return packetConn, listener, nil
		}
		listener.Close()
	}
	return nil, nil, bosherr.Error("No loopback port free for both UDP and TCP")
}

func activate(server *dns.Server) error {
	started := make(chan struct{})
	failed := make(chan error, 1)
	server.NotifyStartedFunc = func() { close(started) }
	go func() { failed <- server.ActivateAndServe() }()
	select {
	case <-started:
		return nil
	case err := <-failed:
		return bosherr.WrapError(err, "Starting the DNS server")
	}
}

// Close stops both listeners; closing again does nothing.
func (s *Server) Close() error {
	s.closeOnce.Do(func() { s.closeErr = s.shutdown() })
	return s.closeErr
}

func (s *Server) shutdown() error {
	udpErr := s.udp.Shutdown()
	tcpErr := s.tcp.Shutdown()
	if udpErr != nil {
		return bosherr.WrapError(udpErr, "Stopping the UDP server")
	}
	if tcpErr != nil {
		return bosherr.WrapError(tcpErr, "Stopping the TCP server")
	}
	return nil
}

// SetAddresses makes the name answer with these addresses (A for IPv4, AAAA for IPv6); none: an empty answer.
func (s *Server) SetAddresses(name string, ips ...net.IP) {
	s.set(name, record{ips: ips, rcode: dns.RcodeSuccess})
}

// SetRcode makes queries for the name fail with rcode (dns.RcodeServerFailure, dns.RcodeNameError, ...).
func (s *Server) SetRcode(name string, rcode int) {
	s.set(name, record{rcode: rcode})
}

// SetSilent makes queries for the name go unanswered.
func (s *Server) SetSilent(name string) {
	s.set(name, record{silent: true})
}

// Remove forgets the name: NXDOMAIN from now on.
func (s *Server) Remove(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.names, key(name))
}

// Queries counts the queries for name received over network ("udp" or "tcp").
func (s *Server) Queries(name, network string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.queries[key(name)+" "+network]
}

func (s *Server) set(name string, r record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.names[key(name)] = r
}

func (s *Server) lookup(name, network string) (record, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queries[key(name)+" "+network]++
	r, ok := s.names[key(name)]
	return r, ok
}

func (s *Server) serve(w dns.ResponseWriter, req *dns.Msg) {
	if len(req.Question) != 1 {
		reply(w, new(dns.Msg).SetRcode(req, dns.RcodeFormatError))
		return
	}
	question := req.Question[0]
	network := w.LocalAddr().Network()
	r, ok := s.lookup(question.Name, network)
	if !ok {
		r = record{rcode: dns.RcodeNameError}
	}
	if r.silent {
		return
	}
	resp := new(dns.Msg).SetRcode(req, r.rcode)
	resp.Authoritative = true
	resp.Answer = answers(question, r.ips)
	if network == "udp" {
		resp.Truncate(udpSize(req))
	}
	reply(w, resp)
}

func answers(q dns.Question, ips []net.IP) []dns.RR {
	var rrs []dns.RR
	for _, ip := range ips {
		header := dns.RR_Header{Name: q.Name, Class: dns.ClassINET, Ttl: 0, Rrtype: q.Qtype}
		switch {
		case q.Qtype == dns.TypeA && ip.To4() != nil:
			rrs = append(rrs, &dns.A{Hdr: header, A: ip.To4()})
		case q.Qtype == dns.TypeAAAA && ip.To4() == nil:
			rrs = append(rrs, &dns.AAAA{Hdr: header, AAAA: ip})
		}
	}
	return rrs
}

func udpSize(req *dns.Msg) int {
	if opt := req.IsEdns0(); opt != nil {
		return int(opt.UDPSize())
	}
	return dns.MinMsgSize
}

func reply(w dns.ResponseWriter, resp *dns.Msg) {
	_ = w.WriteMsg(resp) // the client went away; nothing to do about it
}

func key(name string) string {
	return strings.ToLower(dns.Fqdn(name))
}
