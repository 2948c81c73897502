package sockdiag_test

import (
	"net"
	"net/netip"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/sockdiag"
	"github.com/flannel-dns/flannel-dns/src/testenv/tcpserver"
)

// BenchmarkInfo measures one connection's tcp_info read by its addresses and cookie: what the Reaper pays per
// connection on a tick where the connection's peer missed an echo.
func BenchmarkInfo(b *testing.B) {
	server, err := tcpserver.Start("127.0.0.1:0", nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(server.Close)
	conn, err := net.Dial("tcp", server.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { conn.Close() })
	socket := find(b, netip.MustParseAddrPort(conn.LocalAddr().String()), netip.MustParseAddrPort(conn.RemoteAddr().String()))

	for b.Loop() {
		if _, err := sockdiag.Info(socket); err != nil {
			b.Fatal(err)
		}
	}
}

// find lists the connection from local to remote (a closed one of an earlier run may have had the same local
// port, and linger in TIME_WAIT).
func find(b *testing.B, local, remote netip.AddrPort) sockdiag.Socket {
	sockets, err := sockdiag.DumpTCP(unix.AF_INET)
	if err != nil {
		b.Fatal(err)
	}
	for _, s := range sockets {
		if s.Local == local && s.Remote == remote {
			return s
		}
	}
	b.Fatalf("no socket from %s in the dump", local)
	return sockdiag.Socket{}
}
