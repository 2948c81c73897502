// Package netconfig makes sure flannel's network config exists at <prefix>/config without ever overwriting
// a different one unless told to.
//
//	result, err := netconfig.Ensure(ctx, client, key, desired, enforcement, logger)  // read; create if absent
//	status, err := netconfig.Read(ctx, client, key, desired)                     // read only, for check
package netconfig

import (
	"context"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
	boshlog "github.com/cloudfoundry/bosh-utils/logger"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// State is how the stored config relates to the desired one.
type State string

const (
	Absent    State = "absent"
	Equal     State = "equal"
	Different State = "different"
)

// Status is the stored config compared with the desired one.
type Status struct {
	Key         string
	State       State
	Existing    []byte // nil when absent
	Desired     []byte
	Differences []string // one line per differing field, when Different
	modRevision int64
}

// Read compares the stored config with the desired one without writing. Like Ensure, it reads what the member
// it asks holds (a serializable read), which any member answers without a leader.
func Read(ctx context.Context, kv clientv3.KV, key string, desired []byte) (Status, error) {
	return read(ctx, kv, key, desired, clientv3.WithSerializable())
}

func read(ctx context.Context, kv clientv3.KV, key string, desired []byte, opts ...clientv3.OpOption) (Status, error) {
	resp, err := kv.Get(ctx, key, opts...)
	if err != nil {
		return Status{}, bosherr.WrapErrorf(err, "Reading the network config at '%s'", key)
	}
	status := Status{Key: key, State: Absent, Desired: desired}
	if len(resp.Kvs) == 0 {
		return status, nil
	}
	status.Existing, status.modRevision = resp.Kvs[0].Value, resp.Kvs[0].ModRevision
	status.Differences = compare(status.Existing, desired)
	status.State = Equal
	if len(status.Differences) > 0 {
		status.State = Different
	}
	return status, nil
}

// Result is what Ensure did.
type Result struct {
	Status
	Created     bool
	Overwritten bool
	// KeptNewer: the stored config differs and was left as it is although enforce is on, because this node
	// enforced its desired config before.
	KeptNewer bool
}

// Ensure reads the config first from the member it asks, which needs no leader, so that a start during a
// leader election or a quorum loss does not wait on a write it does not need. It writes only when the config is
// absent there, or different while enforce is on and this node's record does not name its desired config; see
// write. With enforce on, once the stored config equals the desired one, the record is made to name it; with
// enforce off, the record is removed, so that turning enforce on enforces once on every node.
func Ensure(ctx context.Context, kv clientv3.KV, key string, desired []byte, enforce Enforcement, logger boshlog.Logger) (Result, error) {
	if !enforce.On {
		enforce.forget(logger)
	}
	status, err := Read(ctx, kv, key, desired)
	switch {
	case err != nil:
		return Result{}, err
	case status.State == Equal:
		enforce.remember(key, desired, logger)
		return Result{Status: status}, nil
	case status.State == Different && !enforce.On:
		return leave(status, logger), nil
	case status.State == Different && enforce.enforcedBefore(key, desired, logger):
		return keepNewer(status, logger), nil
	}
	result, err := write(ctx, kv, key, desired, enforce.On, logger)
	if err == nil && (result.Created || result.Overwritten || result.State == Equal) {
		enforce.remember(key, desired, logger)
	}
	return result, err
}

// write creates the config when the key does not exist, in a transaction that writes only if it still does
// not, so that of many launchers starting together exactly one writes. A different config is left alone and its
// differences logged, unless enforce: then it is replaced, guarded by the revision that was compared. Its reads
// are linearizable: a write goes through the leader anyway, and must compare with what the cluster holds.
func write(ctx context.Context, kv clientv3.KV, key string, desired []byte, enforce bool, logger boshlog.Logger) (Result, error) {
	created, err := txn(ctx, kv, key, desired, clientv3.Compare(clientv3.CreateRevision(key), "=", 0))
	if err != nil {
		return Result{}, err
	}
	if created {
		logger.Info(logTag, "Created the network config at '%s': %s", key, desired)
		return Result{Status: Status{Key: key, State: Absent, Desired: desired}, Created: true}, nil
	}
	status, err := read(ctx, kv, key, desired)
	if err != nil || status.State != Different {
		return Result{Status: status}, err
	}
	if !enforce {
		return leave(status, logger), nil
	}
	return overwrite(ctx, kv, status, logger)
}

func leave(status Status, logger boshlog.Logger) Result {
	logger.Warn(logTag, "The network config at '%s' differs from the desired one and is left as it is (network.enforce is false): %v",
		status.Key, status.Differences)
	return Result{Status: status}
}

func keepNewer(status Status, logger boshlog.Logger) Result {
	logger.Warn(logTag, "The network config at '%s' differs from the desired one and is left as it is: this node enforced "+
		"its desired config before, so the stored one is newer than what this node was rendered with (network.enforce "+
		"replaces a different config once per change of the desired one): %v", status.Key, status.Differences)
	return Result{Status: status, KeptNewer: true}
}

func overwrite(ctx context.Context, kv clientv3.KV, status Status, logger boshlog.Logger) (Result, error) {
	written, err := txn(ctx, kv, status.Key, status.Desired, clientv3.Compare(clientv3.ModRevision(status.Key), "=", status.modRevision))
	if err != nil {
		return Result{Status: status}, err
	}
	if !written {
		return Result{Status: status}, bosherr.Errorf("The network config at '%s' changed while it was being replaced; not overwritten", status.Key)
	}
	logger.Warn(logTag, "Replaced the network config at '%s' (network.enforce is true, and this node's desired config "+
		"changed since it last enforced one, or it has no record of that): %v", status.Key, status.Differences)
	return Result{Status: status, Overwritten: true}, nil
}

func txn(ctx context.Context, kv clientv3.KV, key string, value []byte, guard clientv3.Cmp) (bool, error) {
	resp, err := kv.Txn(ctx).If(guard).Then(clientv3.OpPut(key, string(value))).Commit()
	if err != nil {
		return false, bosherr.WrapErrorf(err, "Writing the network config at '%s'", key)
	}
	return resp.Succeeded, nil
}

const logTag = "netconfig"
