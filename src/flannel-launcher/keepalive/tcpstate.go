package keepalive

import (
	"errors"
	"fmt"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/sockdiag"
)

// tcpState is what the kernel's tcp_info shows of flanneld's connections to one peer.
type tcpState struct {
	ackedSince  bool          // one of them received an ACK after the moment asked about
	lastAck     time.Duration // how long ago the latest ACK on any of them came; -1 when none is established
	unacked     uint32        // segments sent and not acknowledged, over all of them
	retransmits uint8         // the most retransmissions in a row of one segment, or probes unanswered
}

func (s tcpState) String() string {
	if s.lastAck < 0 {
		return "none established"
	}
	return fmt.Sprintf("last ACK %s ago, %d segment(s) unacknowledged, %d retransmission(s) or probe(s) in a row",
		s.lastAck.Round(time.Millisecond), s.unacked, s.retransmits)
}

// readTCPState reads the tcp_info of each connection (a connection that has closed since it was listed tells
// nothing) and returns the established ones too. A connection still connecting shows no ACK.
func readTCPState(conns []conn, since time.Time) (tcpState, []conn, error) {
	state := tcpState{lastAck: -1}
	var open []conn
	for _, c := range conns {
		info, err := sockdiag.Info(c.socket)
		if errors.Is(err, sockdiag.ErrGone) {
			continue
		}
		if err != nil {
			return state, nil, err
		}
		if info.State == netlink.TCP_SYN_SENT {
			continue
		}
		if info.State == netlink.TCP_ESTABLISHED {
			open = append(open, c)
		}
		lastAck := time.Duration(info.Last_ack_recv) * time.Millisecond
		if state.lastAck < 0 || lastAck < state.lastAck {
			state.lastAck = lastAck
		}
		state.ackedSince = state.ackedSince || time.Now().Add(-lastAck).After(since)
		state.unacked += info.Unacked
		state.retransmits = max(state.retransmits, info.Retransmits, info.Probes)
	}
	return state, open, nil
}
