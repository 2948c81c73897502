package resolve

import (
	"context"
	"net"
	"slices"
	"time"

	boshlog "github.com/cloudfoundry/bosh-utils/logger"
)

// Lookuper is what the watcher needs of a Resolver.
type Lookuper interface {
	Lookup(ctx context.Context, name string) ([]net.IP, error)
}

// Change is the difference between two answers.
type Change struct {
	Added   []net.IP
	Removed []net.IP
}

func (c Change) Empty() bool {
	return len(c.Added) == 0 && len(c.Removed) == 0
}

// Watcher re-resolves a name and logs how its answer changes. It only logs: a failed lookup keeps the
// last answer, and nothing is restarted.
type Watcher struct {
	lookuper Lookuper
	name     string
	last     []net.IP
	logger   boshlog.Logger
}

// NewWatcher starts from the answer already known (the one the launcher started with).
func NewWatcher(lookuper Lookuper, name string, current []net.IP, logger boshlog.Logger) *Watcher {
	return &Watcher{lookuper: lookuper, name: name, last: current, logger: logger}
}

// Run calls Cycle on every tick until ctx ends.
func (w *Watcher) Run(ctx context.Context, ticks <-chan time.Time) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticks:
			_, _ = w.Cycle(ctx) // Cycle logs a failure; the next tick tries again
		}
	}
}

// Cycle resolves the name once, compares with the last answer and logs what changed.
func (w *Watcher) Cycle(ctx context.Context) (Change, error) {
	ips, err := w.lookuper.Lookup(ctx, w.name)
	if err != nil {
		w.logger.Warn(logTag, "Re-resolving '%s' failed, keeping the last answer (%s): %s", w.name, joinIPs(w.last), err)
		return Change{}, err
	}
	change := Change{Added: missingFrom(w.last, ips), Removed: missingFrom(ips, w.last)}
	if !change.Empty() {
		w.logger.Info(logTag, "'%s' changed: added [%s], removed [%s], now [%s]",
			w.name, joinIPs(change.Added), joinIPs(change.Removed), joinIPs(ips))
	}
	w.last = ips
	return change, nil
}

// missingFrom lists the addresses of b that a lacks.
func missingFrom(a, b []net.IP) []net.IP {
	var missing []net.IP
	for _, ip := range b {
		if !slices.ContainsFunc(a, ip.Equal) {
			missing = append(missing, ip)
		}
	}
	return missing
}
