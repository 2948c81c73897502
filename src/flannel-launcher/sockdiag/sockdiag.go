// Package sockdiag reads the kernel's table of TCP sockets and destroys one of them, over NETLINK_SOCK_DIAG
// (inet_diag), as `ss -t` and `ss -K` do.
//
// Dumps go through github.com/vishvananda/netlink. Destroy builds its own request: the library's SocketDestroy
// takes IPv4 addresses only and sends no cookie, so the kernel would destroy whichever socket holds those
// addresses now, even one opened by another process after the listed socket closed.
package sockdiag

import (
	"encoding/binary"
	"errors"
	"net/netip"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

// Socket is one TCP socket as a dump listed it.
type Socket struct {
	Family        uint8 // unix.AF_INET or unix.AF_INET6 (whose addresses may be IPv4-mapped)
	Local, Remote netip.AddrPort
	Interface     uint32
	Cookie        [2]uint32 // the kernel's identity of the socket, never given to another
	Inode         uint64
}

// ErrGone says that the socket has closed since it was listed; another may hold its addresses now.
var ErrGone = errors.New("the socket has closed since it was listed")

// DumpTCP lists the TCP sockets of one family (unix.AF_INET or unix.AF_INET6) in the network namespace.
func DumpTCP(family uint8) ([]Socket, error) {
	dumped, err := netlink.SocketDiagTCP(family)
	if err != nil {
		return nil, bosherr.WrapErrorf(err, "Dumping the %s TCP sockets (NETLINK_SOCK_DIAG)", familyName(family))
	}
	sockets := make([]Socket, 0, len(dumped))
	for _, s := range dumped {
		sockets = append(sockets, Socket{
			Family:    s.Family,
			Local:     netip.AddrPortFrom(address(s.Family, s.ID.Source), s.ID.SourcePort),
			Remote:    netip.AddrPortFrom(address(s.Family, s.ID.Destination), s.ID.DestinationPort),
			Interface: s.ID.Interface,
			Cookie:    s.ID.Cookie,
			Inode:     uint64(s.INode),
		})
	}
	return sockets, nil
}

// address keeps an IPv6 socket's IPv4-mapped address as it is: the kernel finds the socket by that form.
func address(family uint8, ip []byte) netip.Addr {
	addr, _ := netip.AddrFromSlice(ip)
	if family == unix.AF_INET {
		return addr.Unmap() // the library hands IPv4 addresses over in their 16-byte form
	}
	return addr
}

// Destroy closes the socket in the kernel (SOCK_DESTROY; needs CAP_NET_ADMIN and a kernel built with
// CONFIG_INET_DIAG_DESTROY); its owner's next read or write fails with ECONNABORTED. The kernel finds the socket
// by its addresses and then checks the cookie, so it destroys the listed socket or nothing (ErrGone).
func Destroy(s Socket) error {
	request := nl.NewNetlinkRequest(nl.SOCK_DESTROY, unix.NLM_F_ACK)
	request.AddData(destroyRequest(s))
	_, err := request.Execute(unix.NETLINK_INET_DIAG, 0)
	switch {
	case errors.Is(err, unix.ESTALE), errors.Is(err, unix.ENOENT):
		return ErrGone
	case err != nil:
		return bosherr.WrapErrorf(err, "Destroying the TCP connection %s -> %s (SOCK_DESTROY)", s.Local, s.Remote)
	}
	return nil
}

// destroyRequest is a struct inet_diag_req_v2 (linux/inet_diag.h) naming one socket, cookie included.
type destroyRequest Socket

const sizeofRequest = 56

func (r destroyRequest) Len() int { return sizeofRequest }

func (r destroyRequest) Serialize() []byte {
	b := make([]byte, sizeofRequest)
	b[0], b[1] = r.Family, unix.IPPROTO_TCP // then idiag_ext, pad and idiag_states, unused here
	binary.BigEndian.PutUint16(b[8:], r.Local.Port())
	binary.BigEndian.PutUint16(b[10:], r.Remote.Port())
	putAddress(b[12:28], r.Family, r.Local.Addr())
	putAddress(b[28:44], r.Family, r.Remote.Addr())
	binary.NativeEndian.PutUint32(b[44:], r.Interface)
	binary.NativeEndian.PutUint32(b[48:], r.Cookie[0])
	binary.NativeEndian.PutUint32(b[52:], r.Cookie[1])
	return b
}

// putAddress fills an idiag_src or idiag_dst field: the first 4 bytes for IPv4, all 16 for IPv6.
func putAddress(field []byte, family uint8, addr netip.Addr) {
	if family == unix.AF_INET {
		four := addr.Unmap().As4()
		copy(field, four[:])
		return
	}
	sixteen := addr.As16()
	copy(field, sixteen[:])
}

func familyName(family uint8) string {
	if family == unix.AF_INET6 {
		return "IPv6"
	}
	return "IPv4"
}
