package keepalive

import (
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"net/netip"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/sockdiag"
)

// nudger makes a peer's kernel answer on one of flanneld's connections, so that an idle connection shows
// whether the peer is there: it sends the peer a SYN in the connection's name, from a raw TCP socket
// (CAP_NET_RAW). A TCP stack that follows RFC 5961 (Linux since 3.6) answers a SYN for an established connection
// with a challenge ACK, whatever its sequence number, and changes nothing else; that ACK reaches flanneld's
// socket, whose tcp_info then shows an ACK just received. This is what a keepalive probe does, which the Reaper
// cannot set on flanneld's sockets. Nothing reaches etcd. The peer answers at most one such SYN per connection
// every 500 ms (net.ipv4.tcp_invalid_ratelimit).
//
// A SYN rather than a segment out of the window: conntrack lets a SYN on an established connection through and
// expects the challenge ACK, while it marks an out-of-window segment invalid, which many firewalls drop.
type nudger struct {
	v4, v6 int // raw sockets; v6 is -1 on a host without IPv6
}

func newNudger() (*nudger, error) {
	v4, err := rawTCPSocket(unix.AF_INET)
	if err != nil {
		return nil, err
	}
	v6, err := rawTCPSocket(unix.AF_INET6)
	if errors.Is(err, errFamilyOff) {
		v6 = -1
	} else if err != nil {
		unix.Close(v4)
		return nil, err
	}
	return &nudger{v4: v4, v6: v6}, nil
}

// rawTCPSocket opens a raw socket to send TCP segments from. Such a socket also receives a copy of every TCP
// segment the host receives: a filter drops them all.
func rawTCPSocket(domain int) (int, error) {
	fd, err := unix.Socket(domain, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.IPPROTO_TCP)
	if err != nil {
		return -1, familyError(bosherr.WrapError(err, "Opening a raw TCP socket (needs CAP_NET_RAW)"), err)
	}
	if err := attachFilter(fd, []bpf.Instruction{bpf.RetConstant{Val: 0}}); err != nil {
		unix.Close(fd)
		return -1, bosherr.WrapError(err, "Filtering out what the raw TCP socket receives")
	}
	return fd, nil
}

// nudge sends one SYN in the name of the connection.
func (n *nudger) nudge(s sockdiag.Socket) error {
	local, remote := netip.AddrPortFrom(s.Local.Addr().Unmap(), s.Local.Port()), netip.AddrPortFrom(s.Remote.Addr().Unmap(), s.Remote.Port())
	segment := synSegment(local, remote)
	var err error
	switch {
	case remote.Addr().Is4():
		info := unix.PktInfo4(&unix.Inet4Pktinfo{Spec_dst: local.Addr().As4()}) // the source address
		err = unix.Sendmsg(n.v4, segment, info, &unix.SockaddrInet4{Addr: remote.Addr().As4()}, 0)
	case n.v6 >= 0:
		info := unix.PktInfo6(&unix.Inet6Pktinfo{Addr: local.Addr().As16(), Ifindex: s.Interface})
		err = unix.Sendmsg(n.v6, segment, info, &unix.SockaddrInet6{Addr: remote.Addr().As16(), ZoneId: s.Interface}, 0)
	}
	if err != nil {
		return bosherr.WrapErrorf(err, "Sending a SYN to %s in the name of %s", remote, local)
	}
	return nil
}

// synSegment is a TCP header with the SYN flag, a random sequence number and its checksum. Written out here,
// as x/net has no TCP header; it is 20 bytes.
func synSegment(local, remote netip.AddrPort) []byte {
	b := make([]byte, 20)
	binary.BigEndian.PutUint16(b[0:], local.Port())
	binary.BigEndian.PutUint16(b[2:], remote.Port())
	binary.BigEndian.PutUint32(b[4:], rand.Uint32())
	b[12] = 5 << 4                           // data offset: 5 words, no options
	b[13] = 0x02                             // SYN
	binary.BigEndian.PutUint16(b[14:], 1024) // window; the peer discards the segment
	binary.BigEndian.PutUint16(b[16:], checksum(local.Addr(), remote.Addr(), b))
	return b
}

// checksum is the Internet checksum of a TCP segment and its pseudo-header (RFC 793, RFC 8200 for IPv6): the
// addresses, the protocol and the length, then the segment.
func checksum(source, destination netip.Addr, segment []byte) uint16 {
	sum := uint32(unix.IPPROTO_TCP) + uint32(len(segment))
	for _, part := range [][]byte{source.AsSlice(), destination.AsSlice(), segment} {
		for i := 0; i+1 < len(part); i += 2 {
			sum += uint32(binary.BigEndian.Uint16(part[i:]))
		}
	}
	for sum > 0xffff {
		sum = sum&0xffff + sum>>16
	}
	return ^uint16(sum)
}

func (n *nudger) close() error {
	if n.v6 >= 0 {
		unix.Close(n.v6)
	}
	return unix.Close(n.v4)
}
