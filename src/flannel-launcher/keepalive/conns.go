package keepalive

import (
	"net/netip"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/sockdiag"
)

// conn is one of the process's TCP connections to the port, as the dump that identified it listed it: by its
// cookie, SOCK_DESTROY reaches this socket and no other.
type conn struct {
	socket sockdiag.Socket
	inode  uint64
}

// peer is the address to ping: an IPv6 socket's IPv4-mapped peer is an IPv4 host.
func (c conn) peer() netip.Addr { return c.socket.Remote.Addr().Unmap() }

// known is what a socket table dump said about one of the process's socket inodes.
type known struct {
	conn    conn
	ours    bool // a TCP connection to the port
	settled bool // false: absent from one dump only (created but not yet connected, say); looked at again
}

// connTable finds a process's TCP connections to a port, IPv4 and IPv6: its socket inodes from /proc/<pid>/fd, their
// addresses from a NETLINK_SOCK_DIAG dump of the network namespace's TCP sockets, matched by inode. The dump
// reads every TCP socket of the namespace (the host's), so it runs only when the process's set of sockets has
// changed; steady state only lists /proc/<pid>/fd.
type connTable struct {
	process  *Process
	port     int
	families []uint8 // the address families to dump
	inodes   map[uint64]known
	dumps    int // how many dumps so far: for tests and benchmarks
}

func newConnTable(process *Process, port int, families []uint8) *connTable {
	return &connTable{process: process, port: port, families: families, inodes: map[uint64]known{}}
}

// conns returns the process's connections to the port now.
func (t *connTable) conns() ([]conn, error) {
	sockets, err := t.process.sockets()
	if err != nil {
		return nil, bosherr.WrapErrorf(err, "Finding pid %d's sockets", t.process.PID())
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

// refresh dumps the namespace's TCP sockets and notes what each of the process's sockets is. A socket absent
// from the dump is settled as "not a TCP connection" only when it is absent from a second dump too: a TCP socket
// between socket() and connect() is in no table yet.
func (t *connTable) refresh(sockets []socketFD) error {
	t.dumps++
	var dumped []sockdiag.Socket
	for _, family := range t.families {
		some, err := sockdiag.DumpTCP(family)
		if err != nil {
			return err
		}
		dumped = append(dumped, some...)
	}
	byInode := make(map[uint64]sockdiag.Socket, len(dumped))
	for _, socket := range dumped {
		byInode[socket.Inode] = socket
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

func (t *connTable) identify(socket sockdiag.Socket) known {
	remote := socket.Remote.Addr()
	return known{
		conn:    conn{socket: socket, inode: socket.Inode},
		ours:    int(socket.Remote.Port()) == t.port && remote.IsValid() && !remote.IsUnspecified(),
		settled: true,
	}
}

// forget stops counting the connection as one of the process's: once destroyed, it is not destroyed again
// should the process not have closed its descriptor by the next tick.
func (t *connTable) forget(c conn) {
	t.inodes[c.inode] = known{settled: true}
}
