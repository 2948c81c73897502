// Package sockdiag reads the kernel's table of TCP sockets, what the kernel knows of one of them (tcp_info),
// and destroys one of them, over NETLINK_SOCK_DIAG (inet_diag), as `ss -t`, `ss -ti` and `ss -K` do.
//
// Dumps go through github.com/vishvananda/netlink. Info and Destroy build their own request, naming one socket
// by its addresses and cookie: the library's SocketDestroy takes IPv4 addresses only and sends no cookie, so the
// kernel would destroy whichever socket holds those addresses now, even one opened by another process after the
// listed socket closed; and it has no query for one socket's tcp_info (its SocketGet sends a dump request and
// keeps the first answer, and SocketDiagTCPInfo dumps the whole namespace). The tcp_info itself is read into
// x/sys's unix.TCPInfo, which has the kernel's layout.
package sockdiag

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"unsafe"

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

// ErrCannotDestroy says that the kernel destroys no socket for this process: it was built without
// CONFIG_INET_DIAG_DESTROY (EOPNOTSUPP), or the process lacks CAP_NET_ADMIN (EPERM). Asking again will not help.
var ErrCannotDestroy = errors.New("the kernel destroys no socket for this process (a kernel without " +
	"CONFIG_INET_DIAG_DESTROY, or no CAP_NET_ADMIN)")

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
	request.AddData(oneSocket{socket: s})
	_, err := request.Execute(unix.NETLINK_INET_DIAG, 0)
	if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EPERM) {
		// fmt, not bosherr: bosh-utils' errors do not unwrap, and callers test for ErrCannotDestroy.
		return fmt.Errorf("Destroying the TCP connection %s -> %s (SOCK_DESTROY): %w: %w", s.Local, s.Remote, ErrCannotDestroy, err)
	}
	return failure(err, "Destroying the TCP connection %s -> %s (SOCK_DESTROY)", s)
}

// CanDestroy asks the kernel to destroy a TCP connection of this process's own, on 127.0.0.1: nil when it does,
// an error that is ErrCannotDestroy when it refuses as it would for any socket. The kernel checks both the
// capability and its build only once it has found a socket, so the probe needs a real one.
func CanDestroy() error {
	listener, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return bosherr.WrapError(err, "Opening a loopback listener to try SOCK_DESTROY on")
	}
	defer listener.Close()
	conn, err := net.Dial("tcp4", listener.Addr().String())
	if err != nil {
		return bosherr.WrapError(err, "Connecting on loopback to try SOCK_DESTROY on")
	}
	defer conn.Close()
	err = Destroy(Socket{Family: unix.AF_INET, Local: conn.LocalAddr().(*net.TCPAddr).AddrPort(),
		Remote: conn.RemoteAddr().(*net.TCPAddr).AddrPort(), Cookie: [2]uint32{noCookie, noCookie}})
	if err == nil || errors.Is(err, ErrCannotDestroy) {
		return err
	}
	return bosherr.WrapError(err, "Trying SOCK_DESTROY on a loopback connection")
}

// noCookie is INET_DIAG_NOCOOKIE: the kernel finds the socket by its addresses alone.
const noCookie = ^uint32(0)

// Info reads what the kernel knows of the listed socket's exchange with its peer (struct tcp_info: state, time
// since the last ACK and data received, unacknowledged segments, retransmissions, probes), or ErrGone. It needs
// no capability.
func Info(s Socket) (*unix.TCPInfo, error) {
	request := nl.NewNetlinkRequest(nl.SOCK_DIAG_BY_FAMILY, 0)
	request.AddData(oneSocket{socket: s, extensions: 1 << (netlink.INET_DIAG_INFO - 1)})
	answers, err := request.Execute(unix.NETLINK_INET_DIAG, nl.SOCK_DIAG_BY_FAMILY)
	if err != nil {
		return nil, failure(err, "Reading the TCP info of %s -> %s (NETLINK_SOCK_DIAG)", s)
	}
	if len(answers) != 1 || len(answers[0]) < sizeofMessage {
		return nil, bosherr.Errorf("Reading the TCP info of %s -> %s: %d answers, no socket in them", s.Local, s.Remote, len(answers))
	}
	attributes, err := nl.ParseRouteAttr(answers[0][sizeofMessage:])
	if err != nil {
		return nil, bosherr.WrapErrorf(err, "Reading the TCP info of %s -> %s", s.Local, s.Remote)
	}
	for _, attribute := range attributes {
		if attribute.Attr.Type == netlink.INET_DIAG_INFO {
			return tcpInfo(attribute.Value), nil
		}
	}
	return nil, bosherr.Errorf("Reading the TCP info of %s -> %s: the kernel sent none", s.Local, s.Remote)
}

// failure is ErrGone when the kernel found no socket by the addresses, or one with another cookie; otherwise err
// wrapped with what was done (a format naming the local and the remote address), or nil.
func failure(err error, doing string, s Socket) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.ESTALE), errors.Is(err, unix.ENOENT):
		return ErrGone
	}
	return bosherr.WrapErrorf(err, doing, s.Local, s.Remote)
}

// sizeofMessage is the size of a struct inet_diag_msg, which the attributes follow.
const sizeofMessage = 72

// tcpInfo copies a struct tcp_info as the kernel sent it: an older kernel's is shorter (the fields it lacks stay
// zero), a newer one's longer (the fields x/sys does not know are left out).
func tcpInfo(b []byte) *unix.TCPInfo {
	var info unix.TCPInfo
	copy(unsafe.Slice((*byte)(unsafe.Pointer(&info)), unix.SizeofTCPInfo), b)
	return &info
}

// oneSocket is a struct inet_diag_req_v2 (linux/inet_diag.h) naming one socket, cookie included, and asking for
// the extensions (a bit mask of 1 << (INET_DIAG_* - 1)).
type oneSocket struct {
	socket     Socket
	extensions uint8
}

const sizeofRequest = 56

func (r oneSocket) Len() int { return sizeofRequest }

func (r oneSocket) Serialize() []byte {
	s := r.socket
	b := make([]byte, sizeofRequest)
	b[0], b[1], b[2] = s.Family, unix.IPPROTO_TCP, r.extensions // then pad and idiag_states, unused here
	binary.BigEndian.PutUint16(b[8:], s.Local.Port())
	binary.BigEndian.PutUint16(b[10:], s.Remote.Port())
	putAddress(b[12:28], s.Family, s.Local.Addr())
	putAddress(b[28:44], s.Family, s.Remote.Addr())
	binary.NativeEndian.PutUint32(b[44:], s.Interface)
	binary.NativeEndian.PutUint32(b[48:], s.Cookie[0])
	binary.NativeEndian.PutUint32(b[52:], s.Cookie[1])
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
