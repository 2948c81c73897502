package sockdiag_test

import (
	"errors"
	"io"
	"net"
	"net/netip"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/sockdiag"
	"github.com/flannel-dns/flannel-dns/src/testenv/loopback"
	"github.com/flannel-dns/flannel-dns/src/testenv/tcpserver"
)

var _ = Describe("sockdiag", func() {
	It("finds that this kernel destroys a connection for a process with CAP_NET_ADMIN", func() {
		Expect(sockdiag.CanDestroy()).To(Succeed())
	})

	for _, family := range []struct {
		name   string
		number uint8
		host   func() string
	}{
		{"IPv4", unix.AF_INET, func() string { return loopback.IPs(1)[0].String() }},
		{"IPv6", unix.AF_INET6, func() string { return "::1" }},
	} {
		Context(family.name, func() {
			var server string

			BeforeEach(func() {
				server = echoServer(net.JoinHostPort(family.host(), "0"))
			})

			It("lists a connection with its addresses, inode and cookie", func() {
				conn := dial(server, 0)

				found := listed(family.number, conn)

				Expect(found.Inode).To(Equal(inode(conn)))
				Expect(found.Cookie).NotTo(Equal([2]uint32{}))
			})

			It("destroys the listed connection: its owner's next read fails with ECONNABORTED", func() {
				conn := dial(server, 0)
				other := dial(server, 0)

				Expect(sockdiag.Destroy(listed(family.number, conn))).To(Succeed())

				_, err := conn.Read(make([]byte, 1))
				Expect(errors.Is(err, syscall.ECONNABORTED)).To(BeTrue(), "read: %v", err)
				expectOpen(other)
			})

			It("reads a connection's TCP info: its state and how long ago it last received an ACK and data", func() {
				conn := dial(server, 0)
				expectOpen(conn)
				time.Sleep(300 * time.Millisecond)

				info, err := sockdiag.Info(listed(family.number, conn))

				Expect(err).NotTo(HaveOccurred())
				Expect(info.State).To(BeEquivalentTo(netlink.TCP_ESTABLISHED))
				Expect(info.Last_ack_recv).To(BeNumerically("~", 300, 250), "ms since the echo's ACK")
				Expect(info.Last_data_recv).To(BeNumerically("~", 300, 250), "ms since the echo")
				Expect(info.Unacked).To(BeZero())
				Expect(info.Bytes_received).To(BeEquivalentTo(1))
			})

			It("reads no TCP info for a listed connection that has closed, nor for another that took its addresses", func() {
				conn := dial(server, 0)
				gone := listed(family.number, conn)
				Expect(conn.SetLinger(0)).To(Succeed())
				Expect(conn.Close()).To(Succeed())

				_, err := sockdiag.Info(gone)
				Expect(err).To(MatchError(sockdiag.ErrGone))

				dial(server, gone.Local.Port())
				_, err = sockdiag.Info(gone)
				Expect(err).To(MatchError(sockdiag.ErrGone))
			})

			It("leaves alone a connection that took the addresses of a listed one that has closed", func() {
				conn := dial(server, 0)
				gone := listed(family.number, conn)
				Expect(conn.SetLinger(0)).To(Succeed()) // a reset: no TIME_WAIT keeps the addresses
				Expect(conn.Close()).To(Succeed())
				successor := dial(server, gone.Local.Port())
				Expect(listed(family.number, successor).Remote).To(Equal(gone.Remote))

				Expect(sockdiag.Destroy(gone)).To(MatchError(sockdiag.ErrGone))

				expectOpen(successor)
			})
		})
	}
})

// echoServer accepts connections on address and echoes what they send until the spec ends.
func echoServer(address string) string {
	server, err := tcpserver.Start(address, tcpserver.Echo)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(server.Close)
	return server.Addr().String()
}

// dial connects to server from the given local port (0: any), closed when the spec ends.
func dial(server string, localPort uint16) *net.TCPConn {
	remote := netip.MustParseAddrPort(server)
	local := &net.TCPAddr{IP: remote.Addr().AsSlice(), Port: int(localPort)}
	conn, err := (&net.Dialer{LocalAddr: local}).Dial("tcp", server)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { conn.Close() }) // a spec may have closed it
	return conn.(*net.TCPConn)
}

// listed finds conn in a dump by its addresses.
func listed(family uint8, conn *net.TCPConn) sockdiag.Socket {
	local := netip.MustParseAddrPort(conn.LocalAddr().String())
	remote := netip.MustParseAddrPort(conn.RemoteAddr().String())
	sockets, err := sockdiag.DumpTCP(family)
	Expect(err).NotTo(HaveOccurred())
	for _, s := range sockets {
		if s.Family == family && s.Local == local && s.Remote == remote {
			return s
		}
	}
	Fail("no socket " + local.String() + " -> " + remote.String() + " in the dump")
	return sockdiag.Socket{}
}

func inode(conn *net.TCPConn) uint64 {
	raw, err := conn.SyscallConn()
	Expect(err).NotTo(HaveOccurred())
	var stat unix.Stat_t
	Expect(raw.Control(func(fd uintptr) { Expect(unix.Fstat(int(fd), &stat)).To(Succeed()) })).To(Succeed())
	return stat.Ino
}

// expectOpen checks that conn still carries data both ways.
func expectOpen(conn *net.TCPConn) {
	_, err := conn.Write([]byte("x"))
	Expect(err).NotTo(HaveOccurred())
	echoed := make([]byte, 1)
	_, err = io.ReadFull(conn, echoed)
	Expect(err).NotTo(HaveOccurred())
}
