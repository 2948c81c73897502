package keepalive

import (
	"context"
	"errors"
	"net/netip"
	"time"

	boshlog "github.com/cloudfoundry/bosh-utils/logger"
	"golang.org/x/sys/unix"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/sockdiag"
)

// ReaperTick is how often the Reaper echoes each peer and judges it. Not below 500 ms: a peer's kernel answers
// at most one nudge per connection every 500 ms (see nudger).
const ReaperTick = 500 * time.Millisecond

// DeadAfter is how many echoes in a row a peer that has answered one may miss, while none of flanneld's
// connections to it receives an ACK after the first of them went out, before it is judged dead. The first lost
// echo goes out 0 to 1 ReaperTick after the peer went silent and the last miss is counted DeadAfter ticks later:
// flanneld's connections to it are destroyed 1.5 to 2 s after the cut, and two nudges have gone unanswered.
const DeadAfter = 3

// DeadAfterTCPOnly is DeadAfter for a peer that answers no echo (ICMP filtered between the VMs) but whose kernel
// has answered a nudge: with the nudges alone as evidence, seven in a row must go unanswered. At 5 % loss each
// way about one nudge in ten goes unanswered, so seven in a row by chance is about 1 in 10^7; the cut is found
// 3.5 to 4 s after it.
const DeadAfterTCPOnly = 8

// Reaper is the fallback for when the kernel refuses the Tuner's pidfd calls (bpm's seccomp profile for jobs
// that are not privileged). It needs only CAP_NET_RAW and CAP_NET_ADMIN, which the flanneld job has. On each
// tick it sends one ICMP (or ICMPv6) echo request to every peer that the process holds a TCP connection to on
// the port. A peer that misses an echo is judged by what the kernel knows of those connections (tcp_info): one
// that has received an ACK since the first missed echo went out is alive, whatever ICMP says; where none has,
// the Reaper nudges each (see nudger) so that a live peer's kernel answers on it before the next tick. A peer
// that misses DeadAfter echoes in a row with no ACK on any connection since is dead: the Reaper destroys the
// connections (SOCK_DESTROY, as `ss -K`), and flanneld's etcd client reconnects through the other endpoints.
// It sends nothing to etcd. A peer that has answered no echo since flanneld's current connections to it were
// made, and whose kernel has answered none of the nudges either, is never judged dead. Where ICMP is filtered, a
// peer that answers nudges is judged by them alone, after DeadAfterTCPOnly ticks. Not safe for concurrent use.
type Reaper struct {
	pid, port int
	logger    boshlog.Logger
	table     *connTable
	echo      *echoer
	nudger    *nudger
	peers     map[netip.Addr]*peer
	said      map[saying]bool // what was logged about a peer once for the Reaper's life
	refused   error           // the kernel's refusal to destroy a socket (sockdiag.ErrCannotDestroy), once it came
	leave     func(dead netip.Addr)
}

// peer is what the echoes and the kernel have shown of one address since flanneld's current connections to it
// were made: when those are replaced (new cookies), whatever was learned goes with them.
type peer struct {
	conns       []conn    // as of the last tick
	answered    bool      // an echo, since
	acked       bool      // an ACK on a connection after a missed echo, since: the peer is judged by TCP alone
	misses      int       // echoes in a row without an answer
	unanswered  int       // echoes without an answer, in all, while it has answered none
	sentAt      time.Time // when the last echo went out; zero when none is awaited
	silentSince time.Time // when the first of the missed echoes went out
}

// saying is one kind of line logged once per peer address.
type saying struct {
	addr netip.Addr
	what string
}

// NewReaper watches the peers of the process's connections to remotePort. It opens raw ICMP and TCP sockets, so
// it fails without CAP_NET_RAW; Close releases them. Where the kernel destroys no socket, leave (nil: none) is
// called with each peer judged dead, for the caller to leave it another way.
func NewReaper(process *Process, remotePort int, logger boshlog.Logger, leave func(dead netip.Addr)) (*Reaper, error) {
	echo, err := newEchoer()
	if err != nil {
		return nil, err
	}
	nudger, err := newNudger()
	if err != nil {
		echo.close()
		return nil, err
	}
	families := []uint8{unix.AF_INET}
	if echo.hasIPv6() {
		families = append(families, unix.AF_INET6)
	}
	r := &Reaper{pid: process.PID(), port: remotePort, logger: logger, table: newConnTable(process, remotePort, families),
		echo: echo, nudger: nudger, peers: map[netip.Addr]*peer{}, said: map[saying]bool{}, leave: leave}
	r.probeDestroy()
	return r, nil
}

// probeDestroy finds out at start whether the kernel destroys sockets here, so that an operator learns it before
// a member dies. The first dead member is still tried, and its refusal logged with its own connections.
func (r *Reaper) probeDestroy() {
	err := sockdiag.CanDestroy()
	switch {
	case errors.Is(err, sockdiag.ErrCannotDestroy) && r.leave != nil:
		r.logger.Warn(logTag, "Dead etcd members: the kernel destroys no socket here, so pid %d is restarted without a "+
			"member that dies: %s", r.pid, err)
	case errors.Is(err, sockdiag.ErrCannotDestroy):
		r.logger.Error(logTag, "Dead etcd members: the kernel destroys no socket here, so pid %d's connections to a dead "+
			"member will keep the kernel's timeouts: %s", r.pid, err)
	case err != nil:
		r.logger.Warn(logTag, "Could not find out whether the kernel destroys sockets here: %s", err)
	}
}

// Run calls Cycle on every tick until ctx ends, logging failures as Tuner.Run does.
func (r *Reaper) Run(ctx context.Context, ticks <-chan time.Time) {
	onTicks(ctx, ticks, func() error { _, err := r.Cycle(); return err }, func(err error) {
		r.logger.Warn(logTag, "Watching pid %d's peers on port %d failed, retrying: %s", r.pid, r.port, err)
	})
}

// Close releases the raw sockets.
func (r *Reaper) Close() error {
	return errors.Join(r.echo.close(), r.nudger.close())
}

// Dumps is how many times the socket table has been dumped: once at the start and after each change of the
// process's sockets, not on every tick.
func (r *Reaper) Dumps() int {
	return r.table.dumps
}

// Cycle judges each peer by the answer to the last tick's echo and, when it missed it, by the kernel's TCP state
// of the connections to it; destroys the connections to the dead ones, nudges those it cannot tell about yet,
// sends the next echoes, and returns how many connections it destroyed.
func (r *Reaper) Cycle() (int, error) {
	conns, err := r.table.conns()
	if err != nil {
		return 0, err
	}
	answered, err := r.echo.collect()
	if err != nil { // the replies could not be read: judge no one on this tick
		return 0, err
	}
	byPeer := map[netip.Addr][]conn{}
	for _, c := range conns {
		byPeer[c.peer()] = append(byPeer[c.peer()], c)
	}
	for addr := range r.peers {
		if _, ok := byPeer[addr]; !ok {
			delete(r.peers, addr)
		}
	}
	destroyed := 0
	var failures []error
	for addr, conns := range byPeer {
		count, err := r.act(addr, r.peer(addr, conns), conns, answered[addr])
		destroyed += count
		failures = append(failures, err)
	}
	return destroyed, errors.Join(failures...)
}

// peer returns what is known of addr, afresh when flanneld's connections to it have been replaced since the
// last tick.
func (r *Reaper) peer(addr netip.Addr, conns []conn) *peer {
	p, ok := r.peers[addr]
	if !ok || !sharesOne(p.conns, conns) {
		p = &peer{}
		r.peers[addr] = p
	}
	p.conns = conns
	return p
}

func sharesOne(before, now []conn) bool {
	for _, b := range before {
		for _, n := range now {
			if b.socket.Cookie == n.socket.Cookie {
				return true
			}
		}
	}
	return false
}

// act counts the answer to the peer's last echo, judges the peer, destroys or nudges its connections as the
// verdict says, and sends the peer its next echo unless it is dead.
func (r *Reaper) act(addr netip.Addr, p *peer, conns []conn, answered bool) (int, error) {
	r.count(addr, p, answered)
	judged, err := r.judge(addr, p, conns)
	failures := []error{err}
	switch judged.verdict {
	case dead:
		delete(r.peers, addr)
		return r.destroyAll(addr, p, conns, judged.tcp)
	case unsure:
		for _, c := range judged.open {
			failures = append(failures, r.nudger.nudge(c.socket))
		}
	}
	return 0, errors.Join(append(failures, r.ping(addr, p))...)
}

// ping sends the peer this round's echo and notes when.
func (r *Reaper) ping(addr netip.Addr, p *peer) error {
	p.sentAt = time.Time{}
	if err := r.echo.send(addr); err != nil {
		return err
	}
	p.sentAt = time.Now()
	return nil
}

// count notes the answer to the echo sent on the last tick, if one was sent.
func (r *Reaper) count(addr netip.Addr, p *peer, answered bool) {
	switch {
	case p.sentAt.IsZero():
	case answered:
		if r.once(addr, "answers") {
			r.logger.Info(logTag, "Peer %s answers ICMP echo: pid %d's connections to it on port %d are destroyed "+
				"should it miss %d in a row with no ACK received on them since the first", addr, r.pid, r.port, DeadAfter)
		}
		p.answered, p.misses = true, 0
	default:
		if p.misses == 0 {
			p.silentSince = p.sentAt
		}
		p.misses++
		if !p.answered {
			p.unanswered++
		}
	}
	if !p.answered && p.unanswered >= DeadAfter && r.once(addr, "filtered") {
		r.logger.Warn(logTag, "Peer %s has answered none of %d ICMP echoes (filtered?): it is judged by its TCP answers "+
			"alone; pid %d's connections to it on port %d are destroyed should %d nudges in a row find no ACK, once one "+
			"has found one", addr, p.unanswered, r.pid, r.port, DeadAfterTCPOnly-1)
	}
}

// once tells whether this is the first time the Reaper says what about addr.
func (r *Reaper) once(addr netip.Addr, what string) bool {
	key := saying{addr, what}
	first := !r.said[key]
	r.said[key] = true
	return first
}

type verdict int

const (
	alive  verdict = iota
	unsure         // missed an echo, and no ACK on its connections since: nudge them
	dead
)

// judgment is a verdict on a peer and the TCP state it rests on.
type judgment struct {
	verdict
	tcp  tcpState
	open []conn // the established connections, to nudge
}

// judge reads the kernel's TCP state of the connections to a peer that has missed an echo. Any ACK received
// since the first missed echo went out clears it. Without that state there is no verdict but alive. A peer that
// has shown neither an echo nor an ACK since its connections were made is never dead.
func (r *Reaper) judge(addr netip.Addr, p *peer, conns []conn) (judgment, error) {
	if p.misses == 0 {
		return judgment{verdict: alive}, nil
	}
	state, open, err := readTCPState(conns, p.silentSince)
	if err != nil {
		return judgment{verdict: alive}, err
	}
	switch {
	case state.ackedSince:
		if r.once(addr, "tcp") {
			r.logger.Info(logTag, "Peer %s missed %d ICMP echo(es) but pid %d's connections to it on port %d received "+
				"an ACK since (%s): it is alive; judged by its TCP answers while it misses echoes", addr, p.misses, r.pid, r.port, state)
		}
		r.logger.Debug(logTag, "Peer %s alive by TCP after %d missed echo(es): %s", addr, p.misses, state)
		p.misses, p.acked = 0, true
		return judgment{verdict: alive, tcp: state}, nil
	case p.answered && p.misses >= DeadAfter, !p.answered && p.acked && p.misses >= DeadAfterTCPOnly:
		return judgment{verdict: dead, tcp: state}, nil
	}
	return judgment{verdict: unsure, tcp: state, open: open}, nil
}

func (r *Reaper) destroyAll(addr netip.Addr, p *peer, conns []conn, state tcpState) (int, error) {
	r.logger.Warn(logTag, "Peer %s missed %d ICMP echoes in a row and pid %d's %d connection(s) to it on port %d "+
		"received no ACK since the first (%s): destroying them", addr, p.misses, r.pid, len(conns), r.port, state)
	if !p.answered {
		r.logger.Warn(logTag, "Peer %s was judged by TCP alone: it answered no ICMP echo since pid %d's connections to it "+
			"were made", addr, r.pid)
	}
	if r.refused != nil {
		r.leaveDead(addr, r.refused)
		return 0, nil
	}
	destroyed := 0
	var failures []error
	for _, c := range conns {
		r.table.forget(c)
		err := sockdiag.Destroy(c.socket)
		switch {
		case errors.Is(err, sockdiag.ErrCannotDestroy):
			r.refused = err
			r.leaveDead(addr, err)
			return destroyed, nil
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

// leaveDead hands a dead peer to leave, or says once that its connections keep the kernel's timeouts: the kernel
// destroys none here.
func (r *Reaper) leaveDead(addr netip.Addr, refusal error) {
	switch {
	case r.leave != nil:
		r.logger.Warn(logTag, "Peer %s is dead and its connections cannot be destroyed (%s): leaving it by restarting "+
			"pid %d", addr, refusal, r.pid)
		r.leave(addr)
	case r.once(addr, "refused"):
		r.logger.Error(logTag, "Peer %s is dead but its connections cannot be destroyed, they keep the kernel's "+
			"timeouts: %s", addr, refusal)
	}
}
