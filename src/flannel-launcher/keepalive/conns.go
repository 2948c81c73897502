package keepalive

import (
	"net"
	"net/netip"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// conn is one of the process's TCP connections to the port, named by its addresses as the kernel's socket
// table (inet_diag) knows them.
type conn struct {
	local, remote netip.AddrPort
}

// known is what a socket table dump said about one of the process's socket inodes.
type known struct {
	conn    conn
	ours    bool // an IPv4 TCP connection to the port
	settled bool // false: absent from one dump only (created but not yet connected, say); looked at again
}

// connTable finds a process's IPv4 TCP connections to a port: its socket inodes from /proc/<pid>/fd, their
// addresses from a NETLINK_SOCK_DIAG dump of the network namespace's TCP sockets, matched by inode. The dump
// reads every TCP socket of the namespace (the host's), so it runs only when the process's set of sockets has
// changed; steady state only lists /proc/<pid>/fd.
type connTable struct {
	procRoot  string
	pid, port int
	inodes    map[uint64]known
	dumps     int // how many dumps so far: for tests and benchmarks
}

func newConnTable(procRoot string, pid, port int) *connTable {
	return &connTable{procRoot: procRoot, pid: pid, port: port, inodes: map[uint64]known{}}
}

// conns returns the process's connections to the port now.
func (t *connTable) conns() ([]conn, error) {
	sockets, err := socketFDs(t.procRoot, t.pid)
	if err != nil {
		return nil, bosherr.WrapErrorf(err, "Finding pid %d's sockets", t.pid)
	}
	if t.changed(sockets) {
		if err := t.refresh(sockets); err != nil {
			return nil, err
		}
	}
	var found []conn
	for _, socket := range sockets {
		if entry := t.inodes[socket.inode]; entry.ours {
			found = append(found, entry.conn)
		}
	}
	return found, nil
}

// changed tells whether the sockets differ from those of the last dump, or some of them need a second look.
func (t *connTable) changed(sockets []socketFD) bool {
	if len(sockets) != len(t.inodes) {
		return true
	}
	for _, socket := range sockets {
		if entry, ok := t.inodes[socket.inode]; !ok || !entry.settled {
			return true
		}
	}
	return false
}

// refresh dumps the namespace's IPv4 TCP sockets and notes what each of the process's sockets is. A socket
// absent from the dump is settled as "not a TCP connection" only when it is absent from a second dump too: a
// TCP socket between socket() and connect() is in no table yet.
func (t *connTable) refresh(sockets []socketFD) error {
	dumped, err := netlink.SocketDiagTCP(unix.AF_INET)
	t.dumps++
	if err != nil {
		return bosherr.WrapError(err, "Dumping the IPv4 TCP sockets (NETLINK_SOCK_DIAG)")
	}
	byInode := make(map[uint64]*netlink.Socket, len(dumped))
	for _, socket := range dumped {
		byInode[uint64(socket.INode)] = socket
	}
	next := make(map[uint64]known, len(sockets))
	for _, socket := range sockets {
		entry, seen := t.inodes[socket.inode]
		if found, ok := byInode[socket.inode]; ok {
			entry = t.identify(found)
		} else {
			entry.settled = seen
		}
		next[socket.inode] = entry
	}
	t.inodes = next
	return nil
}

func (t *connTable) identify(socket *netlink.Socket) known {
	local, _ := netip.AddrFromSlice(socket.ID.Source.To4())
	remote, _ := netip.AddrFromSlice(socket.ID.Destination.To4())
	return known{
		conn: conn{
			local:  netip.AddrPortFrom(local, socket.ID.SourcePort),
			remote: netip.AddrPortFrom(remote, socket.ID.DestinationPort),
		},
		ours:    int(socket.ID.DestinationPort) == t.port && remote.IsValid() && !remote.IsUnspecified(),
		settled: true,
	}
}

// destroy closes the connection in the kernel, as `ss -K` does (SOCK_DESTROY; needs CAP_NET_ADMIN and a
// kernel built with CONFIG_INET_DIAG_DESTROY). The process's next read or write on it fails with ECONNABORTED.
func destroy(c conn) error {
	err := netlink.SocketDestroy(net.TCPAddrFromAddrPort(c.local), net.TCPAddrFromAddrPort(c.remote))
	if err != nil {
		return bosherr.WrapErrorf(err, "Destroying the TCP connection %s -> %s (SOCK_DESTROY)", c.local, c.remote)
	}
	return nil
}

// forget stops counting c as one of the process's connections: once destroyed, it is not destroyed again
// should the process not have closed its descriptor by the next tick.
func (t *connTable) forget(c conn) {
	for inode, entry := range t.inodes {
		if entry.ours && entry.conn == c {
			t.inodes[inode] = known{settled: true}
		}
	}
}
