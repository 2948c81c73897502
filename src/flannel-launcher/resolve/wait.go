package resolve

import (
	"context"
	"math/rand/v2"
	"net"
	"time"

	boshlog "github.com/cloudfoundry/bosh-utils/logger"
)

// Backoff spaces out retries: Initial doubles after every attempt up to Max, and each wait is drawn
// between half and all of that so that many VMs starting together do not ask in step.
type Backoff struct {
	Initial time.Duration
	Max     time.Duration
}

// Delay is the wait after the given attempt (1 for the first).
func (b Backoff) Delay(attempt int) time.Duration {
	d := b.Initial
	for i := 1; i < attempt && d < b.Max; i++ {
		d *= 2
	}
	d = min(d, b.Max)
	return d/2 + rand.N(d/2+1)
}

// WaitForAnswer looks the name up until it has addresses or ctx ends (the startup deadline), logging the
// cause of every failed attempt and, when failed is set, passing it on (the launcher's status file shows it).
// When ctx ends first the error is a *GaveUpError.
func (r *Resolver) WaitForAnswer(ctx context.Context, name string, b Backoff, logger boshlog.Logger, failed func(error)) ([]net.IP, error) {
	start := time.Now()
	var lastErr error
	attempts := 0
	for {
		ips, err := r.Lookup(ctx, name)
		if err == nil {
			logger.Info(logTag, "'%s' resolves to %s", name, joinIPs(ips))
			return ips, nil
		}
		if cutShort(ctx) && lastErr != nil {
			break // this attempt was cut short by the deadline; the previous cause says more
		}
		attempts++
		lastErr = err
		if failed != nil {
			failed(err)
		}
		wait := b.Delay(attempts)
		logger.Warn(logTag, "Attempt %d: %s; retrying in %s", attempts, err, wait.Round(time.Millisecond))
		if !sleep(ctx, wait) {
			break
		}
	}
	return nil, &GaveUpError{Name: name, Servers: r.Servers(), Attempts: attempts, Waited: time.Since(start), Last: lastErr}
}

// cutShort tells whether ctx has ended. A lookup bounded by ctx's deadline may come back a moment before ctx
// itself says so.
func cutShort(ctx context.Context) bool {
	deadline, ok := ctx.Deadline()
	return ctx.Err() != nil || ok && !time.Now().Before(deadline)
}

func sleep(ctx context.Context, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-timer.C:
		return true
	}
}

const logTag = "resolve"
