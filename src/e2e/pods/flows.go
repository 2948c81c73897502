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
	for f, times := range p.sent {
		counted := Flow{From: f.from, To: f.to}
		for seq, t := range times {
			if t.Before(from) || !t.Before(to) {
				continue
			}
			counted.Sent++
			if _, echoed := p.acked[f][uint32(seq)]; !echoed {
				counted.Lost++
			}
		}
		if counted.Sent > 0 {
			flows = append(flows, counted)
		}
	}
	return flows
}
