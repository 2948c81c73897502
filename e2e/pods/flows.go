package pods

import (
	"net/netip"
	"time"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
)

// Remove stops probing from and to the pod at addr and closes its socket (which would otherwise keep its
// namespace, and the pod's veth, alive after the namespace is deleted). What it sent and received before
// stays counted.
func (p *Prober) Remove(addr netip.Addr) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, pr := range p.pods {
		if pr.pod.Address == addr {
			p.pods = append(p.pods[:i], p.pods[i+1:]...)
			close(pr.removed)
			return pr.conn.Close()
		}
	}
	return bosherr.Errorf("No pod at %s in the probe", addr)
}

// Flow is what one pod sent another over a window and how much of it got no echo.
type Flow struct {
	From, To   netip.Addr
	Sent, Lost int
}

// Flows is Loss for each pair of pods (in each direction) that sent anything in [from, to).
func (p *Prober) Flows(from, to time.Time) []Flow {
	p.mu.Lock()
	defer p.mu.Unlock()
	var flows []Flow
	for f, times := range p.sent {
		counted := Flow{From: f.from, To: f.to}
		for seq, t := range times {
			if t.Before(from) || !t.Before(to) {
				continue
			}
			counted.Sent++
			if !p.acked[f][uint32(seq)] {
				counted.Lost++
			}
		}
		if counted.Sent > 0 {
			flows = append(flows, counted)
		}
	}
	return flows
}
