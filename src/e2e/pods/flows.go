package pods

import (
	"net/netip"
	"time"
)

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
	for f := range p.sent {
		if sent, lost, _ := p.count(f, from, to); sent > 0 {
			flows = append(flows, Flow{From: f.from, To: f.to, Sent: sent, Lost: lost})
		}
	}
	return flows
}
