package members

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// lateGrace is the least a task still running gets after a majority of its kind succeeded: on one network, a
// healthy member answers within milliseconds of the others.
const lateGrace = 50 * time.Millisecond

// lateError cancels the tasks that had not finished when a majority of theirs had succeeded and the grace after
// that had passed.
type lateError struct {
	waited        time.Duration
	succeeded, of int
}

func (e *lateError) Error() string {
	return fmt.Sprintf("no answer within %s, by when %d of %d had answered", e.waited.Round(time.Millisecond), e.succeeded, e.of)
}

// late is the lateError that ended ctx, if one did.
func late(ctx context.Context) (*lateError, bool) {
	err, ok := context.Cause(ctx).(*lateError)
	return err, ok
}

// settle runs task(ctx, i) for every i below n side by side and returns once every task has returned. With
// leaveOutLate, once more than half of them have succeeded, the others get as long again as that took, at least
// lateGrace, and are then cancelled with a lateError: a member that does not answer must not hold a start that a
// majority answered at once for the whole probe timeout. Without a majority, every task runs to its own timeout.
func settle(ctx context.Context, n int, leaveOutLate bool, task func(ctx context.Context, i int) bool) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	started := time.Now()
	results := make(chan bool, n)
	var tasks sync.WaitGroup
	for i := range n {
		tasks.Go(func() { results <- task(ctx, i) })
	}
	done := make(chan struct{})
	go func() {
		tasks.Wait()
		close(done)
	}()
	var cut <-chan time.Time
	succeeded := 0
	for {
		select {
		case <-done:
			return
		case ok := <-results:
			if ok {
				succeeded++
			}
			if leaveOutLate && cut == nil && succeeded > n/2 {
				cut = time.After(max(time.Since(started), lateGrace))
			}
		case <-cut:
			cancel(&lateError{waited: time.Since(started), succeeded: succeeded, of: n})
			<-done
			return
		}
	}
}
