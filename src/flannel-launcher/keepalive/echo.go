package keepalive

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"net/netip"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
	"golang.org/x/net/bpf"
	"golang.org/x/net/icmp"
	"golang.org/x/net/ipv4"
	"golang.org/x/net/ipv6"
	"golang.org/x/sys/unix"
)

// echoer sends ICMP echo requests from raw sockets (CAP_NET_RAW), one for IPv4 and one for IPv6, and collects
// the replies, one round per tick.
type echoer struct {
	v4, v6   *pinger // v6 is nil on a host without IPv6
	answered map[netip.Addr]bool
}

func newEchoer() (*echoer, error) {
	v4, err := newPinger(ipv4Family)
	if err != nil {
		return nil, err
	}
	v6, err := newPinger(ipv6Family)
	if errors.Is(err, errFamilyOff) {
		v6 = nil // IPv6 is off: no connection to an IPv6 peer can exist either
	} else if err != nil {
		v4.close()
		return nil, err
	}
	return &echoer{v4: v4, v6: v6, answered: map[netip.Addr]bool{}}, nil
}

// hasIPv6 tells whether the host has IPv6, and so whether there are IPv6 connections to look for.
func (e *echoer) hasIPv6() bool { return e.v6 != nil }

// collect returns the addresses that answered the last round's echoes (the map is reused by the next round)
// and starts a new round.
func (e *echoer) collect() (map[netip.Addr]bool, error) {
	clear(e.answered)
	for _, p := range e.pingers() {
		if err := p.collect(e.answered); err != nil {
			return nil, err
		}
		p.seq++
		clear(p.sent)
	}
	return e.answered, nil
}

// send sends this round's echo request to addr (an IPv4 address in its 4-byte form).
func (e *echoer) send(addr netip.Addr) error {
	p := e.v4
	if !addr.Is4() {
		p = e.v6
	}
	if p == nil {
		return nil
	}
	return p.send(addr)
}

func (e *echoer) pingers() []*pinger {
	if e.v6 == nil {
		return []*pinger{e.v4}
	}
	return []*pinger{e.v4, e.v6}
}

func (e *echoer) close() error {
	var failures []error
	for _, p := range e.pingers() {
		failures = append(failures, p.close())
	}
	return errors.Join(failures...)
}

// family is what differs between ICMP for IPv4 and ICMPv6.
type family struct {
	name            string
	domain, proto   int
	request, reply  icmp.Type
	headerInPackets bool // a raw IPv4 socket receives the IP header; a raw IPv6 socket does not
}

var (
	ipv4Family = family{"IPv4", unix.AF_INET, unix.IPPROTO_ICMP, ipv4.ICMPTypeEcho, ipv4.ICMPTypeEchoReply, true}
	ipv6Family = family{"IPv6", unix.AF_INET6, unix.IPPROTO_ICMPV6, ipv6.ICMPTypeEchoRequest, ipv6.ICMPTypeEchoReply, false}
)

// pinger is one raw socket. A socket filter keeps only echo replies carrying its identifier, so the socket's
// queue holds nothing else between ticks however much other ICMP the host receives. The identifier and the
// sequence number are 32 bits that an off-path sender could guess; the random payload of each echo is not, and
// only a reply that carries it back from the address it went to counts.
type pinger struct {
	family
	fd      int
	id, seq uint16
	sent    map[netip.Addr][]byte // this round's payload per address
	buf     []byte
}

// payloadSize is how many random bytes each echo carries.
const payloadSize = 16

func newPinger(f family) (*pinger, error) {
	fd, err := unix.Socket(f.domain, unix.SOCK_RAW|unix.SOCK_CLOEXEC, f.proto)
	if err != nil {
		return nil, familyError(bosherr.WrapErrorf(err, "Opening a raw %s ICMP socket (needs CAP_NET_RAW)", f.name), err)
	}
	// A random identifier rather than the PID: under bpm every job's first process is PID 1 in its namespace.
	p := &pinger{family: f, fd: fd, id: binary.NativeEndian.Uint16(randomBytes(2)), sent: map[netip.Addr][]byte{},
		buf: make([]byte, 1500)}
	if err := p.filter(); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return p, nil
}

// filter passes only echo replies with the pinger's identifier.
func (p *pinger) filter() error {
	load := []bpf.Instruction{bpf.LoadConstant{Dst: bpf.RegX, Val: 0}}
	if p.headerInPackets {
		load = []bpf.Instruction{bpf.LoadMemShift{Off: 0}} // X = the IP header's length
	}
	err := attachFilter(p.fd, append(load,
		bpf.LoadIndirect{Off: 0, Size: 1}, // ICMP type
		bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: typeNumber(p.reply), SkipTrue: 3},
		bpf.LoadIndirect{Off: 4, Size: 2}, // echo identifier
		bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: uint32(p.id), SkipTrue: 1},
		bpf.RetConstant{Val: 0xffff},
		bpf.RetConstant{Val: 0},
	))
	if err != nil {
		return bosherr.WrapErrorf(err, "Filtering the %s ICMP socket", p.name)
	}
	return nil
}

// attachFilter attaches a classic BPF program to the socket: what it returns 0 for is dropped.
func attachFilter(fd int, program []bpf.Instruction) error {
	raw, err := bpf.Assemble(program)
	if err != nil {
		return bosherr.WrapError(err, "Assembling a socket filter")
	}
	filters := make([]unix.SockFilter, len(raw))
	for i, instruction := range raw {
		filters[i] = unix.SockFilter{Code: instruction.Op, Jt: instruction.Jt, Jf: instruction.Jf, K: instruction.K}
	}
	fprog := unix.SockFprog{Len: uint16(len(filters)), Filter: &filters[0]}
	if err := unix.SetsockoptSockFprog(fd, unix.SOL_SOCKET, unix.SO_ATTACH_FILTER, &fprog); err != nil {
		return bosherr.WrapError(err, "Attaching a socket filter")
	}
	return nil
}

func typeNumber(t icmp.Type) uint32 {
	switch t := t.(type) {
	case ipv4.ICMPType:
		return uint32(t)
	case ipv6.ICMPType:
		return uint32(t)
	}
	return 0
}

// send sends one echo request of the current round to addr, with a payload of its own. The kernel fills in an
// ICMPv6 checksum.
func (p *pinger) send(addr netip.Addr) error {
	payload := randomBytes(payloadSize)
	p.sent[addr] = payload
	echo := &icmp.Echo{ID: int(p.id), Seq: int(p.seq), Data: payload}
	request, err := (&icmp.Message{Type: p.request, Body: echo}).Marshal(nil)
	if err != nil {
		return bosherr.WrapError(err, "Building an ICMP echo request")
	}
	if err := unix.Sendto(p.fd, request, 0, sockaddr(addr)); err != nil {
		return bosherr.WrapErrorf(err, "Sending an ICMP echo request to %s", addr)
	}
	return nil
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	rand.Read(b) // never fails (crypto/rand)
	return b
}

func sockaddr(addr netip.Addr) unix.Sockaddr {
	if addr.Is4() {
		return &unix.SockaddrInet4{Addr: addr.As4()}
	}
	return &unix.SockaddrInet6{Addr: addr.As16()}
}

// collect reads the queued replies without waiting and notes the senders of those to the last round.
func (p *pinger) collect(answered map[netip.Addr]bool) error {
	for {
		n, from, err := unix.Recvfrom(p.fd, p.buf, unix.MSG_DONTWAIT)
		if errors.Is(err, unix.EAGAIN) {
			return nil
		}
		if err != nil {
			return bosherr.WrapErrorf(err, "Reading %s ICMP echo replies", p.name)
		}
		source, ok := senderOf(from)
		if ok && p.isReply(p.buf[:n], p.sent[source]) {
			answered[source] = true
		}
	}
}

func senderOf(from unix.Sockaddr) (netip.Addr, bool) {
	switch from := from.(type) {
	case *unix.SockaddrInet4:
		return netip.AddrFrom4(from.Addr), true
	case *unix.SockaddrInet6:
		return netip.AddrFrom16(from.Addr), true
	}
	return netip.Addr{}, false
}

// isReply checks a packet against the filter's rule, the round's sequence number and the payload sent to its
// sender (nil when nothing was).
func (p *pinger) isReply(packet []byte, payload []byte) bool {
	if p.headerInPackets {
		if len(packet) < 1 || len(packet) < int(packet[0]&0x0f)*4 {
			return false
		}
		packet = packet[int(packet[0]&0x0f)*4:]
	}
	message, err := icmp.ParseMessage(p.request.Protocol(), packet)
	if err != nil || message.Type != p.reply {
		return false
	}
	echo, ok := message.Body.(*icmp.Echo)
	return ok && echo.ID == int(p.id) && echo.Seq == int(p.seq) && payload != nil && bytes.Equal(echo.Data, payload)
}

func (p *pinger) close() error {
	return unix.Close(p.fd)
}
