package launch

import "fmt"

// RetryError is one failed attempt at reaching etcd that may pass: the run waits and tries again.
type RetryError struct {
	Attempt int
	Err     error
}

func (e *RetryError) Error() string {
	return fmt.Sprintf("attempt %d: %s", e.Attempt, e.Err)
}

func (e *RetryError) Unwrap() error { return e.Err }

// GiveUpError ends the run before flanneld starts: the startup deadline passed, or retrying cannot help
// (a TLS setup problem).
type GiveUpError struct {
	Step string
	Err  error
}

func (e *GiveUpError) Error() string {
	return fmt.Sprintf("giving up on %s: %s", e.Step, e.Err)
}

func (e *GiveUpError) Unwrap() error { return e.Err }

// StoppedError means a stop signal came before flanneld started.
type StoppedError struct {
	Signal string
}

func (e *StoppedError) Error() string {
	return fmt.Sprintf("stopped by %s before flanneld started", e.Signal)
}
