package keepalive

import (
	"context"
	"errors"
	"maps"
	"net/netip"
	"slices"
	"time"

	boshlog "github.com/cloudfoundry/bosh-utils/logger"
	"golang.org/x/sys/unix"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/sockdiag"
)

// DeadAfter is how many echoes in a row a peer that has answered before may miss before it is judged dead.
// With a 2 s tick, the first lost echo goes out 0 to 2 s after the peer went silent and the third miss is
// counted 6 s later: flanneld's sockets are destroyed 6 to 8 s after the cut, leaving about 7 s of the 15 s
// goal for flanneld to reconnect through another member and catch up on its watch.
const DeadAfter = 3

// Reaper is the fallback for when the kernel refuses the Tuner's pidfd calls (bpm's seccomp profile for jobs
// that are not privileged). It needs only CAP_NET_RAW and CAP_NET_ADMIN, which the flanneld job has. On each
// tick it sends one ICMP (or ICMPv6) echo request to every peer that the process holds a TCP connection to on
// the port; when a peer that has answered before misses DeadAfter echoes in a row, it destroys the process's
// connections to it (SOCK_DESTROY, as `ss -K`), and flanneld's etcd client reconnects through the other
// endpoints. It sends nothing to etcd. A peer that never answers ICMP is never judged dead. Not safe for
// concurrent use.
type Reaper struct {
	pid, port int
	logger    boshlog.Logger
	table     *connTable
	echo      *echoer
	peers     map[netip.Addr]*peer
}

// peer is what the echoes have shown of one address.
type peer struct {
	answered bool // at least once: only such a peer is ever judged dead
	misses   int  // echoes in a row without an answer
	waiting  bool // an echo went out on the last tick
	reported bool // logged as one that the fallback cannot cover
}

// NewReaper watches the peers of the process's connections to remotePort. It opens a raw ICMP socket, so it fails
// without CAP_NET_RAW; Close releases it.
func NewReaper(process *Process, remotePort int, logger boshlog.Logger) (*Reaper, error) {
	echo, err := newEchoer()
	if err != nil {
		return nil, err
	}
	families := []uint8{unix.AF_INET}
	if echo.hasIPv6() {
		families = append(families, unix.AF_INET6)
	}
	return &Reaper{pid: process.PID(), port: remotePort, logger: logger, table: newConnTable(process, remotePort, families),
		echo: echo, peers: map[netip.Addr]*peer{}}, nil
}

// Run calls Cycle on every tick until ctx ends, logging failures as Tuner.Run does.
func (r *Reaper) Run(ctx context.Context, ticks <-chan time.Time) {
	onTicks(ctx, ticks, func() error { _, err := r.Cycle(); return err }, func(err error) {
		r.logger.Warn(logTag, "Watching pid %d's peers on port %d failed, retrying: %s", r.pid, r.port, err)
	})
}

// Close releases the ICMP socket.
func (r *Reaper) Close() error {
	return r.echo.close()
}

// Dumps is how many times the socket table has been dumped: once at the start and after each change of the
// process's sockets, not on every tick.
func (r *Reaper) Dumps() int {
	return r.table.dumps
}

// Cycle judges each peer by the answer to the last tick's echo, destroys the connections to the dead ones,
// sends the next echoes, and returns how many connections it destroyed.
func (r *Reaper) Cycle() (int, error) {
	conns, err := r.table.conns()
	if err != nil {
		return 0, err
	}
	byPeer := map[netip.Addr][]conn{}
	for _, c := range conns {
		byPeer[c.peer()] = append(byPeer[c.peer()], c)
	}
	answered, err := r.echo.round(slices.Collect(maps.Keys(byPeer)))
	if answered == nil { // the replies could not be read: judge no one on this tick
		return 0, err
	}
	destroyed, destroyErr := r.judge(byPeer, answered)
	return destroyed, errors.Join(err, destroyErr)
}

// judge updates each peer from the answers and destroys the connections to the dead ones. A peer with no
// connection left starts afresh (but keeps having answered) when flanneld connects to it again.
func (r *Reaper) judge(byPeer map[netip.Addr][]conn, answered map[netip.Addr]bool) (int, error) {
	for addr, p := range r.peers {
		if _, ok := byPeer[addr]; !ok {
			p.waiting, p.misses = false, 0
		}
	}
	destroyed := 0
	var failures []error
	for addr, conns := range byPeer {
		p := r.peer(addr)
		r.update(addr, p, answered[addr])
		if p.answered && p.misses >= DeadAfter {
			count, err := r.destroyAll(addr, p, conns)
			destroyed += count
			failures = append(failures, err)
		}
	}
	return destroyed, errors.Join(failures...)
}

func (r *Reaper) peer(addr netip.Addr) *peer {
	p, ok := r.peers[addr]
	if !ok {
		p = &peer{}
		r.peers[addr] = p
	}
	return p
}

// update counts the answer to the echo sent on the last tick, if one was sent.
func (r *Reaper) update(addr netip.Addr, p *peer, answered bool) {
	switch {
	case !p.waiting:
	case answered:
		if !p.answered {
			r.logger.Info(logTag, "Peer %s answers ICMP echo: pid %d's connections to it on port %d are destroyed "+
				"should it miss %d in a row", addr, r.pid, r.port, DeadAfter)
		}
		p.answered, p.misses = true, 0
	default:
		p.misses++
	}
	p.waiting = true
	if !p.answered && p.misses >= DeadAfter && !p.reported {
		p.reported = true
		r.logger.Warn(logTag, "Peer %s has answered none of %d ICMP echoes (filtered?): the fallback cannot tell "+
			"when it dies; pid %d's connections to it on port %d are left to the kernel's timeouts", addr, p.misses, r.pid, r.port)
	}
}

func (r *Reaper) destroyAll(addr netip.Addr, p *peer, conns []conn) (int, error) {
	r.logger.Warn(logTag, "Peer %s missed %d ICMP echoes in a row: destroying pid %d's %d connection(s) to it on port %d",
		addr, p.misses, r.pid, len(conns), r.port)
	destroyed := 0
	var failures []error
	for _, c := range conns {
		r.table.forget(c)
		err := sockdiag.Destroy(c.socket)
		switch {
		case errors.Is(err, sockdiag.ErrGone):
			r.logger.Info(logTag, "pid %d's connection %s -> %s had closed already", r.pid, c.socket.Local, c.socket.Remote)
		case err != nil:
			failures = append(failures, err)
		default:
			destroyed++
			r.logger.Info(logTag, "Destroyed pid %d's connection %s -> %s", r.pid, c.socket.Local, c.socket.Remote)
		}
	}
	return destroyed, errors.Join(failures...)
}
