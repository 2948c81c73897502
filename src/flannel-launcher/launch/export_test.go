package launch

import (
	"context"
	"net/netip"
	"sync"
)

// Leave hands dead to the fallback's leaver as Run wires it, and returns the arguments it restarts flanneld with;
// false: flanneld runs on, for ctx ended first.
func Leave(ctx context.Context, l Launcher, dead netip.Addr) ([]string, bool) {
	var alongside sync.WaitGroup
	restarts := make(chan []string, 1)
	newLeaver(l, &alongside, restarts).leave(ctx)(dead)
	alongside.Wait()
	select {
	case restart := <-restarts:
		return restart, true
	default:
		return nil, false
	}
}
