package v2import

import (
	"context"
	"fmt"
	"net/netip"
	"strings"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
	boshlog "github.com/cloudfoundry/bosh-utils/logger"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Result is what Import copied.
type Result struct {
	Leases  []string // the keys written to v3
	LeftOut []string // v2 leases that do not read as flannel's, with the reason
}

// Client is what Import needs of etcd's v3 client.
type Client interface {
	clientv3.KV
	clientv3.Lease
}

// Import copies into v3 each lease of data that v3 lacks: neither its key nor its node's address is there (a
// node that holds a v3 lease has moved on to flannel-dns, and its old v2 lease must not come back). Each key goes
// in only while it is still absent, with a v3 lease of the TTL it has left. The leases must belong to the network
// flanneld uses: the v3 network config's, or desired's while v3 has none. The network config itself is not
// copied: netconfig writes desired, which kubo wrote to v2 from the same property.
func Import(ctx context.Context, client Client, prefix string, desired []byte, data Data, logger boshlog.Logger) (Result, error) {
	var result Result
	if len(data.Leases) == 0 {
		return result, nil
	}
	v2, err := check(data, prefix)
	if err != nil {
		return result, err
	}
	result.LeftOut = v2.leftOut
	for attempt := 1; ; attempt++ {
		v3, err := readV3(ctx, client, prefix, desired)
		if err != nil {
			return result, err
		}
		if v3.network != v2.network {
			return result, bosherr.Errorf("The v2 network config names %s, flanneld's (in v3 or to be written) %s; "+
				"the v2 leases would be outside it", v2.network, v3.network)
		}
		todo := v3.lacks(v2.leases)
		if len(todo) == 0 {
			break
		}
		if attempt > maxAttempts {
			return result, bosherr.Errorf("The v3 store kept changing under %d attempts to import %d leases", maxAttempts, len(todo))
		}
		written, err := write(ctx, client, todo)
		result.Leases = append(result.Leases, written...)
		if err != nil {
			return result, err
		}
	}
	logResult(logger, result, v2)
	return result, nil
}

// maxAttempts bounds the reads and writes when other launchers import at the same time: each attempt after a
// lost race finds less to do.
const maxAttempts = 5

type v3State struct {
	network netip.Prefix
	keys    map[string]bool
	nodes   map[string]bool // PublicIPs that hold a v3 lease
}

// readV3 reads the network config (desired when absent) and the leases; linearizable, since writes follow.
func readV3(ctx context.Context, kv clientv3.KV, prefix string, desired []byte) (v3State, error) {
	config := desired
	resp, err := kv.Get(ctx, strings.TrimSuffix(prefix, "/")+"/config")
	if err != nil {
		return v3State{}, bosherr.WrapError(err, "Reading the v3 network config")
	}
	if len(resp.Kvs) > 0 {
		config = resp.Kvs[0].Value
	}
	network, err := networkOf(config)
	if err != nil {
		return v3State{}, bosherr.WrapError(err, "The v3 network config (or the desired one)")
	}
	state := v3State{network: network, keys: map[string]bool{}, nodes: map[string]bool{}}
	if resp, err = kv.Get(ctx, strings.TrimSuffix(prefix, "/")+"/subnets/", clientv3.WithPrefix()); err != nil {
		return v3State{}, bosherr.WrapError(err, "Reading the v3 leases")
	}
	for _, kv := range resp.Kvs {
		state.keys[string(kv.Key)] = true
		if node, err := nodeOf(kv.Value); err == nil {
			state.nodes[node] = true
		}
	}
	return state, nil
}

func (s v3State) lacks(leases []lease) []lease {
	var todo []lease
	for _, l := range leases {
		if !s.keys[l.Key] && !s.nodes[l.node] {
			todo = append(todo, l)
		}
	}
	return todo
}

// batch is how many leases one transaction carries: etcd allows 128 operations per transaction by default
// (--max-txn-ops), comparisons and puts counted apart.
const batch = 100

// write puts the leases in batches, each one transaction that writes only if none of its keys exists yet; it
// returns the keys it wrote, and stops at a batch that found a key there (another launcher was quicker).
func write(ctx context.Context, client Client, leases []lease) ([]string, error) {
	var written []string
	for start := 0; start < len(leases); start += batch {
		part := leases[start:min(start+batch, len(leases))]
		ok, err := writeBatch(ctx, client, part)
		if err != nil || !ok {
			return written, err
		}
		for _, l := range part {
			written = append(written, l.Key)
		}
	}
	return written, nil
}

func writeBatch(ctx context.Context, client Client, leases []lease) (bool, error) {
	var granted []clientv3.LeaseID
	revoke := func() {
		for _, id := range granted {
			_, _ = client.Revoke(ctx, id)
		}
	}
	var cmps []clientv3.Cmp
	var puts []clientv3.Op
	for _, l := range leases {
		grant, err := client.Grant(ctx, l.TTL)
		if err != nil {
			revoke()
			return false, bosherr.WrapErrorf(err, "Granting a v3 lease of %d s for '%s'", l.TTL, l.Key)
		}
		granted = append(granted, grant.ID)
		cmps = append(cmps, clientv3.Compare(clientv3.CreateRevision(l.Key), "=", 0))
		puts = append(puts, clientv3.OpPut(l.Key, string(l.Value), clientv3.WithLease(grant.ID)))
	}
	resp, err := client.Txn(ctx).If(cmps...).Then(puts...).Commit()
	if err != nil || !resp.Succeeded {
		revoke()
	}
	if err != nil {
		return false, bosherr.WrapErrorf(err, "Writing %d leases to v3", len(leases))
	}
	return resp.Succeeded, nil
}

func logResult(logger boshlog.Logger, result Result, v2 checked) {
	if len(result.LeftOut) > 0 {
		logger.Warn(logTag, "Left out %d of the v2 store's leases, which flannel would not read either: %s",
			len(result.LeftOut), strings.Join(result.LeftOut, "; "))
	}
	if len(result.Leases) == 0 {
		return
	}
	written := map[string]bool{}
	for _, key := range result.Leases {
		written[key] = true
	}
	var copied []string
	for _, l := range v2.leases {
		if written[l.Key] {
			copied = append(copied, fmt.Sprintf("%s (%s, %d s left)", l.subnet, l.node, l.TTL))
		}
	}
	logger.Info(logTag, "Imported %d leases of kubo's flanneld from the v2 store into v3: %s", len(copied), strings.Join(copied, ", "))
}

const logTag = "v2import"
