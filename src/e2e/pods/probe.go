package pods

import (
	"encoding/binary"
	"net"
	"net/netip"
	"slices"
	"sync"
	"time"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"

	"github.com/flannel-dns/flannel-dns/src/e2e/network"
	"github.com/flannel-dns/flannel-dns/src/e2e/timeline"
)

const (
	probePort = 9000
	ping      = 1
	pong      = 2

	// BucketWidth is the time resolution of the probe's timeline (Buckets).
	BucketWidth = 100 * time.Millisecond
	// rttSamples bounds the round-trip times kept per bucket for its median (min and max see every echo).
	rttSamples = 32
)

// Prober sends a UDP datagram from every pod to every other pod each interval; each pod echoes.
type Prober struct {
	interval time.Duration

	mu       sync.Mutex
	pods     []*prober
	stop     chan struct{}
	stopOnce sync.Once
	wg       sync.WaitGroup
	sent     map[flow][]time.Time
	acked    map[flow]map[uint32]time.Duration // round-trip time of each echoed datagram
	origin   time.Time                         // bucket 0 starts here
	rtts     map[int]*rttBucket                // by bucket index, from the time the datagram was sent
}

type rttBucket struct {
	min, max time.Duration
	samples  []time.Duration
}

type flow struct{ from, to netip.Addr }

type prober struct {
	pod  *Pod
	conn *net.UDPConn
	done chan struct{} // closed when the pod leaves the probe
}

// NewProber makes a prober that sends every interval.
func NewProber(interval time.Duration) *Prober {
	return &Prober{interval: interval, stop: make(chan struct{}), origin: time.Now(), rtts: map[int]*rttBucket{},
		sent: map[flow][]time.Time{}, acked: map[flow]map[uint32]time.Duration{}}
}

// Add opens the pod's socket inside its namespace and starts probing it from and to every other pod.
func (p *Prober) Add(pod *Pod) error {
	conn, err := listenIn(pod.Namespace, netip.AddrPortFrom(pod.Address, probePort))
	if err != nil {
		return err
	}
	pr := &prober{pod: pod, conn: conn, done: make(chan struct{})}
	p.mu.Lock()
	p.pods = append(p.pods, pr)
	p.mu.Unlock()
	p.wg.Add(2)
	go p.receive(pr)
	go p.send(pr)
	return nil
}

// Remove takes the pod at addr out of the probe (it is no longer sent to, and sends no more) and closes its
// socket. What it sent before still counts in Loss and Buckets.
func (p *Prober) Remove(addr netip.Addr) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, pr := range p.pods {
		if pr.pod.Address == addr {
			close(pr.done)
			_ = pr.conn.Close()
			p.pods = slices.Delete(p.pods, i, i+1)
			return
		}
	}
}

// Stop ends probing and closes the sockets; later calls do nothing.
func (p *Prober) Stop() {
	p.stopOnce.Do(func() { close(p.stop) })
	p.mu.Lock()
	for _, pr := range p.pods {
		_ = pr.conn.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// Loss counts, for the datagrams sent in [from, to), how many were sent and how many got no echo.
// Call it at least a second after to, so that every echo had time to come back.
func (p *Prober) Loss(from, to time.Time) (sent, lost int) {
	sent, lost, _ = p.Between(from, to, func(netip.Addr, netip.Addr) bool { return true })
	return sent, lost
}

func (p *Prober) echoed(f flow, seq uint32, at time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, dup := p.acked[f][seq]; p.acked[f] == nil || int(seq) >= len(p.sent[f]) || dup {
		return
	}
	sentAt := p.sent[f][seq]
	rtt := at.Sub(sentAt)
	p.acked[f][seq] = rtt
	idx := int(sentAt.Sub(p.origin) / BucketWidth)
	b := p.rtts[idx]
	if b == nil {
		b = &rttBucket{min: rtt, max: rtt}
		p.rtts[idx] = b
	}
	b.min, b.max = min(b.min, rtt), max(b.max, rtt)
	if len(b.samples) < rttSamples {
		b.samples = append(b.samples, rtt)
	}
}

// Between counts, for the datagrams sent in [from, to) between pods that between accepts (by address), how
// many were sent and lost, and the round-trip times of the others. Call it at least a second after to.
func (p *Prober) Between(from, to time.Time, between func(a, b netip.Addr) bool) (sent, lost int, rtts []time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for f := range p.sent {
		if between(f.from, f.to) {
			s, l, r := p.count(f, from, to)
			sent, lost, rtts = sent+s, lost+l, append(rtts, r...)
		}
	}
	return sent, lost, rtts
}

// count is Between for one flow; p.mu is held.
func (p *Prober) count(f flow, from, to time.Time) (sent, lost int, rtts []time.Duration) {
	for seq, t := range p.sent[f] {
		if t.Before(from) || !t.Before(to) {
			continue
		}
		sent++
		if rtt, echoed := p.acked[f][uint32(seq)]; echoed {
			rtts = append(rtts, rtt)
		} else {
			lost++
		}
	}
	return sent, lost, rtts
}

// Buckets is the probe over time, one bucket per BucketWidth from the prober's creation up to to: the
// datagrams sent in each, how many got no echo, and their round-trip times. Call it at least a second
// after to, as Loss.
func (p *Prober) Buckets(to time.Time) []timeline.Bucket {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := int(to.Sub(p.origin) / BucketWidth)
	if n <= 0 {
		return nil
	}
	buckets := make([]timeline.Bucket, n)
	for i := range buckets {
		buckets[i].Start, buckets[i].Width = p.origin.Add(time.Duration(i)*BucketWidth), BucketWidth
		if b := p.rtts[i]; b != nil {
			sorted := slices.Clone(b.samples)
			slices.Sort(sorted)
			buckets[i].RTTMin, buckets[i].RTTMedian, buckets[i].RTTMax = b.min, sorted[len(sorted)/2], b.max
		}
	}
	for f, times := range p.sent {
		for seq, t := range times {
			idx := int(t.Sub(p.origin) / BucketWidth)
			if idx >= n {
				continue
			}
			buckets[idx].Sent++
			if _, echoed := p.acked[f][uint32(seq)]; !echoed {
				buckets[idx].Lost++
			}
		}
	}
	return buckets
}

func (p *Prober) send(pr *prober) {
	defer p.wg.Done()
	ticker := time.NewTicker(p.interval)
	defer ticker.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-pr.done:
			return
		case <-ticker.C:
		}
		for _, peer := range p.peers(pr) {
			p.ping(pr, peer)
		}
	}
}

func (p *Prober) peers(pr *prober) []netip.Addr {
	p.mu.Lock()
	defer p.mu.Unlock()
	var peers []netip.Addr
	for _, other := range p.pods {
		if other != pr {
			peers = append(peers, other.pod.Address)
		}
	}
	return peers
}

func (p *Prober) ping(pr *prober, peer netip.Addr) {
	f := flow{from: pr.pod.Address, to: peer}
	p.mu.Lock()
	select {
	case <-pr.done: // removed meanwhile: nothing sent, nothing counted
		p.mu.Unlock()
		return
	default:
	}
	seq := uint32(len(p.sent[f]))
	p.sent[f] = append(p.sent[f], time.Now())
	if p.acked[f] == nil {
		p.acked[f] = map[uint32]time.Duration{}
	}
	p.mu.Unlock()
	msg := make([]byte, 5)
	msg[0] = ping
	binary.BigEndian.PutUint32(msg[1:], seq)
	_, _ = pr.conn.WriteToUDPAddrPort(msg, netip.AddrPortFrom(peer, probePort))
}

func (p *Prober) receive(pr *prober) {
	defer p.wg.Done()
	buf := make([]byte, 64)
	for {
		n, from, err := pr.conn.ReadFromUDPAddrPort(buf)
		if err != nil {
			select {
			case <-p.stop:
				return
			case <-pr.done:
				return
			default:
				continue
			}
		}
		if n != 5 {
			continue
		}
		switch buf[0] {
		case ping:
			buf[0] = pong
			_, _ = pr.conn.WriteToUDPAddrPort(buf[:5], from)
		case pong:
			p.echoed(flow{from: pr.pod.Address, to: from.Addr()}, binary.BigEndian.Uint32(buf[1:]), time.Now())
		}
	}
}

// listenIn opens a UDP socket inside namespace ns.
func listenIn(ns string, addr netip.AddrPort) (*net.UDPConn, error) {
	var conn *net.UDPConn
	err := network.InNamespace(ns, func() error {
		var err error
		if conn, err = net.ListenUDP("udp", net.UDPAddrFromAddrPort(addr)); err != nil {
			return bosherr.WrapErrorf(err, "Listening on %s in %s", addr, ns)
		}
		return nil
	})
	return conn, err
}
