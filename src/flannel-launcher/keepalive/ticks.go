package keepalive

import (
	"context"
	"errors"
	"time"
)

// onTicks calls cycle on every tick until ctx ends (it then returns nil) or cycle fails with a *RefusedError
// (returned). Other failures go to warn when they differ from the one before, so a lasting one (say, flanneld
// gone) does not fill the log.
func onTicks(ctx context.Context, ticks <-chan time.Time, cycle func() error, warn func(error)) error {
	last := ""
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-ticks:
			err := cycle()
			var refusal *RefusedError
			if errors.As(err, &refusal) {
				return err
			}
			failure := ""
			if err != nil {
				failure = err.Error()
			}
			if failure != "" && failure != last {
				warn(err)
			}
			last = failure
		}
	}
}
