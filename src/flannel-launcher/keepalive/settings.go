package keepalive

import (
	"time"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
	"golang.org/x/sys/unix"
)

// Settings are the TCP options set on each socket.
type Settings struct {
	Idle        time.Duration // TCP_KEEPIDLE: silence before the first probe
	Interval    time.Duration // TCP_KEEPINTVL: between probes
	Count       int           // TCP_KEEPCNT: unanswered probes before the kernel gives up
	UserTimeout time.Duration // TCP_USER_TIMEOUT: also bounds unacknowledged data, where keepalive is idle
}

// DefaultSettings fail a socket about 6 to 10 s after its peer goes silent: probes go out 4 s after the last
// segment received and every 2 s after that, and the socket fails once 10 s have passed without an answer
// (with TCP_USER_TIMEOUT set, the kernel judges by that time rather than by the probe count). The kernel looks
// at the user timeout only when a probe is due, so 10 s is chosen to fall on the fourth probe: the socket fails
// there, a few tens of milliseconds after 10 s (measured 10.09 to 10.26 s). Sent but
// unacknowledged data fails the same 10 s after its first retransmission. That leaves flanneld about 5 s of
// the 15 s goal to reconnect and catch up.
func DefaultSettings() Settings {
	return Settings{Idle: 4 * time.Second, Interval: 2 * time.Second, Count: 3, UserTimeout: 10 * time.Second}
}

type option struct {
	level, name int
	label       string
	value       int
}

// options lists SO_KEEPALIVE first: setting TCP_KEEPIDLE afterwards re-arms the keepalive timer counting
// from the last segment received, so a socket already silent for a while is probed soon, not Idle from now.
func (s Settings) options() []option {
	return []option{
		{unix.SOL_SOCKET, unix.SO_KEEPALIVE, "SO_KEEPALIVE", 1},
		{unix.IPPROTO_TCP, unix.TCP_KEEPIDLE, "TCP_KEEPIDLE", int(s.Idle / time.Second)},
		{unix.IPPROTO_TCP, unix.TCP_KEEPINTVL, "TCP_KEEPINTVL", int(s.Interval / time.Second)},
		{unix.IPPROTO_TCP, unix.TCP_KEEPCNT, "TCP_KEEPCNT", s.Count},
		{unix.IPPROTO_TCP, unix.TCP_USER_TIMEOUT, "TCP_USER_TIMEOUT", int(s.UserTimeout / time.Millisecond)},
	}
}

// Apply sets the options on the socket fd.
func (s Settings) Apply(fd int) error {
	for _, o := range s.options() {
		if err := unix.SetsockoptInt(fd, o.level, o.name, o.value); err != nil {
			return bosherr.WrapErrorf(err, "Setting %s to %d", o.label, o.value)
		}
	}
	return nil
}
