package keepalive

import (
	"errors"
	"math/rand/v2"
	"net/netip"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
	"golang.org/x/net/bpf"
	"golang.org/x/net/icmp"
	"golang.org/x/net/ipv4"
	"golang.org/x/sys/unix"
)

// echoer sends ICMP echo requests from a raw socket (CAP_NET_RAW) and collects the replies, one round per tick.
// A socket filter keeps only echo replies carrying its identifier, so the socket's queue holds nothing else
// between ticks however much other ICMP the host receives.
type echoer struct {
	fd       int
	id, seq  uint16
	buf      []byte
	answered map[netip.Addr]bool
}

func newEchoer() (*echoer, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.IPPROTO_ICMP)
	if err != nil {
		return nil, bosherr.WrapError(err, "Opening a raw ICMP socket (needs CAP_NET_RAW)")
	}
	// A random identifier rather than the PID: under bpm every job's first process is PID 1 in its namespace.
	e := &echoer{fd: fd, id: uint16(rand.Uint32()), buf: make([]byte, 1500), answered: map[netip.Addr]bool{}}
	if err := e.filter(); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return e, nil
}

// filter passes only ICMP echo replies with the echoer's identifier. On a raw IPv4 socket the filter sees the
// packet from its IP header.
func (e *echoer) filter() error {
	program, err := bpf.Assemble([]bpf.Instruction{
		bpf.LoadMemShift{Off: 0},          // X = the IP header's length
		bpf.LoadIndirect{Off: 0, Size: 1}, // ICMP type
		bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: uint32(ipv4.ICMPTypeEchoReply), SkipTrue: 3},
		bpf.LoadIndirect{Off: 4, Size: 2}, // echo identifier
		bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: uint32(e.id), SkipTrue: 1},
		bpf.RetConstant{Val: 0xffff},
		bpf.RetConstant{Val: 0},
	})
	if err != nil {
		return bosherr.WrapError(err, "Assembling the ICMP socket filter")
	}
	filters := make([]unix.SockFilter, len(program))
	for i, instruction := range program {
		filters[i] = unix.SockFilter{Code: instruction.Op, Jt: instruction.Jt, Jf: instruction.Jf, K: instruction.K}
	}
	fprog := unix.SockFprog{Len: uint16(len(filters)), Filter: &filters[0]}
	if err := unix.SetsockoptSockFprog(e.fd, unix.SOL_SOCKET, unix.SO_ATTACH_FILTER, &fprog); err != nil {
		return bosherr.WrapError(err, "Attaching the ICMP socket filter")
	}
	return nil
}

// round returns the addresses that answered the last round's echo (the map is reused by the next round), then
// sends one echo request to each of addrs.
func (e *echoer) round(addrs []netip.Addr) (map[netip.Addr]bool, error) {
	clear(e.answered)
	if err := e.collect(); err != nil {
		return nil, err
	}
	e.seq++
	request, err := (&icmp.Message{Type: ipv4.ICMPTypeEcho, Body: &icmp.Echo{ID: int(e.id), Seq: int(e.seq)}}).Marshal(nil)
	if err != nil {
		return nil, bosherr.WrapError(err, "Building an ICMP echo request")
	}
	var failures []error
	for _, addr := range addrs {
		if err := unix.Sendto(e.fd, request, 0, &unix.SockaddrInet4{Addr: addr.As4()}); err != nil {
			failures = append(failures, bosherr.WrapErrorf(err, "Sending an ICMP echo request to %s", addr))
		}
	}
	return e.answered, errors.Join(failures...)
}

// collect reads the queued replies without waiting and notes those to the last round.
func (e *echoer) collect() error {
	for {
		n, from, err := unix.Recvfrom(e.fd, e.buf, unix.MSG_DONTWAIT)
		if errors.Is(err, unix.EAGAIN) {
			return nil
		}
		if err != nil {
			return bosherr.WrapError(err, "Reading ICMP echo replies")
		}
		source, ok := from.(*unix.SockaddrInet4)
		if ok && e.isReply(e.buf[:n]) {
			e.answered[netip.AddrFrom4(source.Addr)] = true
		}
	}
}

// isReply checks a packet (IP header first) against the filter's rule and the round's sequence number.
func (e *echoer) isReply(packet []byte) bool {
	if len(packet) < 1 || len(packet) < int(packet[0]&0x0f)*4 {
		return false
	}
	message, err := icmp.ParseMessage(ipv4.ICMPTypeEcho.Protocol(), packet[int(packet[0]&0x0f)*4:])
	if err != nil || message.Type != ipv4.ICMPTypeEchoReply {
		return false
	}
	echo, ok := message.Body.(*icmp.Echo)
	return ok && echo.ID == int(e.id) && echo.Seq == int(e.seq)
}

func (e *echoer) close() error {
	return unix.Close(e.fd)
}
