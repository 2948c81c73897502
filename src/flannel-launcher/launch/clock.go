package launch

import (
	"context"
	"time"
)

// Clock paces the retries and the alias watcher.
type Clock interface {
	After(d time.Duration) <-chan time.Time
	// Ticks delivers a tick every d until ctx ends.
	Ticks(ctx context.Context, d time.Duration) <-chan time.Time
}

// RealClock is the wall clock.
type RealClock struct{}

func (RealClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

func (RealClock) Ticks(ctx context.Context, d time.Duration) <-chan time.Time {
	ticker := time.NewTicker(d)
	context.AfterFunc(ctx, ticker.Stop)
	return ticker.C
}
