package v2import

import (
	"context"
	"errors"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TransientError is a failure that may pass on a later attempt: etcd unreachable, without a leader or quorum,
// shedding load or out of space, a request that ran out of time, other launchers' writes racing this one's. A
// refusal (a network config that does not fit, an answer that is not the v2 API's, a redirect) is not one.
type TransientError struct {
	Err error
}

func (e *TransientError) Error() string { return e.Err.Error() }

func (e *TransientError) Unwrap() error { return e.Err }

// transient marks err, cause's wrapping, as a TransientError unless cause is a refusal. bosherr's wrapping hides
// the cause from errors.As, so the cause is judged where it is still at hand.
func transient(err, cause error) error {
	if refusal(cause) {
		return err
	}
	return &TransientError{Err: err}
}

// refusal tells an etcd error that the same request will get again: an argument etcd does not take (a value
// larger than its request size, a TTL longer than it grants), a permission it does not give.
// The others may pass: Unavailable (no leader, a lost connection, etcd's own timeout), DeadlineExceeded,
// ResourceExhausted (too many requests, no space until an operator frees it), Unknown (a proposal dropped during
// an election).
func refusal(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	code := status.Code(err)
	var etcdErr rpctypes.EtcdError
	if errors.As(err, &etcdErr) {
		code = etcdErr.Code()
	}
	switch code {
	case codes.InvalidArgument, codes.OutOfRange, codes.FailedPrecondition, codes.PermissionDenied,
		codes.Unauthenticated, codes.NotFound, codes.AlreadyExists, codes.Unimplemented:
		return true
	}
	return false
}
