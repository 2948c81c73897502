package v2import

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
	boshlog "github.com/cloudfoundry/bosh-utils/logger"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/netconfig"
)

// Result is what Import copied.
type Result struct {
	Leases  []string // the keys written to v3
	LeftOut []string // v2 leases that do not read as flannel's, or that v3 cannot take, with the reason
}

// Client is what Import needs of etcd's v3 client.
type Client interface {
	clientv3.KV
	clientv3.Lease
}

// Import copies into v3 each lease of data that v3 lacks: neither its key nor its node's address is there (a
// node that holds a v3 lease has moved on to flannel-dns, and its old v2 lease must not come back), and no v3 lease
// overlaps its subnet. Each key goes in only while it is still absent, with a v3 lease of the TTL it has left (24 h at most); a
// lease etcd refuses (a TTL it will not grant, a value larger than it takes) is left out alone, with the reason.
// The leases must belong to the network flanneld uses: the v3 network config's, or desired's while v3 has none.
// The network config itself is not copied: netconfig writes desired, which kubo wrote to v2 from the same
// property. A failure that may pass on a later attempt is a *TransientError.
func Import(ctx context.Context, client Client, prefix string, desired []byte, data Data, logger boshlog.Logger) (Result, error) {
	var result Result
	if len(data.Leases) == 0 {
		return result, nil
	}
	v2, err := check(data, prefix)
	if err != nil {
		return result, err
	}
	refused := map[string]string{} // key: why v3 cannot take the lease
	result.Leases, err = copyLacking(ctx, client, prefix, desired, v2, refused)
	result.LeftOut = slices.Concat(v2.leftOut, reasons(refused))
	if err != nil {
		return result, err
	}
	logResult(logger, result, v2, refused)
	return result, nil
}

// copyLacking writes the leases v3 lacks until it lacks none that it can take, and returns the keys it wrote.
func copyLacking(ctx context.Context, client Client, prefix string, desired []byte, v2 checked, refused map[string]string) ([]string, error) {
	var written []string
	for attempt := 1; ; attempt++ {
		v3, err := readV3(ctx, client, prefix, desired)
		if err != nil {
			return written, err
		}
		if err := fits(v2.config, v3.config); err != nil {
			return written, err
		}
		todo := v3.lacks(v2.leases, refused)
		if len(todo) == 0 {
			return written, nil
		}
		if attempt > maxAttempts {
			return written, &TransientError{Err: bosherr.Errorf("The v3 store kept changing under %d attempts to import %d leases",
				maxAttempts, len(todo))}
		}
		keys, err := write(ctx, client, todo, batch, refused)
		written = append(written, keys...)
		if err != nil {
			return written, err
		}
	}
}

// fits fails unless the v2 network config is flanneld's (v3's) in network and subnet length: flanneld 0.28 counts
// only the subnet addresses of the leases as taken, so it could hand out a subnet inside a lease of another length.
func fits(v2, v3 netconfig.PodNetwork) error {
	switch {
	case v2.Network != v3.Network:
		return bosherr.Errorf("The v2 network config names %s, flanneld's (in v3 or to be written) %s; "+
			"the v2 leases would be outside it", v2.Network, v3.Network)
	case v2.SubnetLen != v3.SubnetLen:
		return bosherr.Errorf("The v2 network config gives /%d subnets, flanneld's (in v3 or to be written) /%d; "+
			"the v2 leases would not be flanneld's", v2.SubnetLen, v3.SubnetLen)
	}
	return nil
}

// maxAttempts bounds the reads and writes when other launchers import at the same time: each attempt after a
// lost race finds less to do.
const maxAttempts = 5

type v3State struct {
	config  netconfig.PodNetwork
	keys    map[string]bool
	nodes   map[string]bool         // PublicIPs that hold a v3 lease
	subnets map[string]netip.Prefix // key: the subnet of each v3 lease
}

// readV3 reads the network config (desired when absent) and the leases; linearizable, since writes follow.
func readV3(ctx context.Context, kv clientv3.KV, prefix string, desired []byte) (v3State, error) {
	config := desired
	resp, err := kv.Get(ctx, strings.TrimSuffix(prefix, "/")+"/config")
	if err != nil {
		return v3State{}, transient(bosherr.WrapError(err, "Reading the v3 network config"), err)
	}
	if len(resp.Kvs) > 0 {
		config = resp.Kvs[0].Value
	}
	network, err := netconfig.PodNetworkOf(config)
	if err != nil {
		return v3State{}, bosherr.WrapError(err, "The v3 network config (or the desired one)")
	}
	state := v3State{config: network, keys: map[string]bool{}, nodes: map[string]bool{}, subnets: map[string]netip.Prefix{}}
	if resp, err = kv.Get(ctx, strings.TrimSuffix(prefix, "/")+"/subnets/", clientv3.WithPrefix()); err != nil {
		return v3State{}, transient(bosherr.WrapError(err, "Reading the v3 leases"), err)
	}
	for _, kv := range resp.Kvs {
		state.keys[string(kv.Key)] = true
		if node, err := nodeOf(kv.Value); err == nil {
			state.nodes[node] = true
		}
		if subnet, err := SubnetOf(string(kv.Key), prefix); err == nil {
			state.subnets[string(kv.Key)] = subnet
		}
	}
	return state, nil
}

// lacks is the leases v3 lacks and can take. A lease whose subnet overlaps a v3 lease's under another key goes
// into refused: its node and that lease's would both route the common addresses.
func (s v3State) lacks(leases []lease, refused map[string]string) []lease {
	var todo []lease
	for _, l := range leases {
		if _, no := refused[l.Key]; no || s.keys[l.Key] || s.nodes[l.node] {
			continue
		}
		if key := s.overlapping(l.subnet); key != "" {
			refused[l.Key] = fmt.Sprintf("subnet %s overlaps the v3 lease at '%s'", l.subnet, key)
			continue
		}
		todo = append(todo, l)
	}
	return todo
}

func (s v3State) overlapping(subnet netip.Prefix) string {
	for key, other := range s.subnets {
		if other.Overlaps(subnet) {
			return key
		}
	}
	return ""
}

// batch is how many leases one transaction carries: etcd allows 128 operations per transaction by default
// (--max-txn-ops), comparisons and puts counted apart.
const batch = 100

// write puts the leases in transactions of size leases at most and returns the keys it wrote. A transaction that
// found a key there (another launcher was quicker) writes nothing; the next read sees what the other one wrote.
func write(ctx context.Context, client Client, leases []lease, size int, refused map[string]string) ([]string, error) {
	var written []string
	for start := 0; start < len(leases); start += size {
		keys, err := writePart(ctx, client, leases[start:min(start+size, len(leases))], refused)
		written = append(written, keys...)
		if err != nil {
			return written, err
		}
	}
	return written, nil
}

// writePart writes leases in one transaction; when etcd refuses it (not a *TransientError), one by one, so that a
// lease etcd refuses keeps out only itself (into refused, with etcd's reason).
func writePart(ctx context.Context, client Client, leases []lease, refused map[string]string) ([]string, error) {
	ok, err := writeBatch(ctx, client, leases)
	var passing *TransientError
	switch {
	case err == nil && ok:
		keys := make([]string, len(leases))
		for i, l := range leases {
			keys[i] = l.Key
		}
		return keys, nil
	case err == nil:
		return nil, nil
	case errors.As(err, &passing):
		return nil, err
	case len(leases) == 1:
		refused[leases[0].Key] = fmt.Sprintf("etcd refused it: %s", err)
		return nil, nil
	}
	return write(ctx, client, leases, 1, refused)
}

// writeBatch writes leases in one transaction if none of their keys exists yet, and tells whether it did.
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
			return false, transient(bosherr.WrapErrorf(err, "Granting a v3 lease of %d s for '%s'", l.TTL, l.Key), err)
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
		return false, transient(bosherr.WrapErrorf(err, "Writing %d leases to v3", len(leases)), err)
	}
	return resp.Succeeded, nil
}

func logResult(logger boshlog.Logger, result Result, v2 checked, refused map[string]string) {
	if len(v2.leftOut) > 0 {
		logger.Warn(logTag, "Left out %d of the v2 store's leases, which flannel would not read either: %s",
			len(v2.leftOut), strings.Join(v2.leftOut, "; "))
	}
	if len(refused) > 0 {
		logger.Warn(logTag, "Left out %d of the v2 store's leases that v3 cannot take: %s", len(refused),
			strings.Join(reasons(refused), "; "))
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

// reasons are "<key>: <reason>", by key.
func reasons(refused map[string]string) []string {
	var lines []string
	for _, key := range slices.Sorted(maps.Keys(refused)) {
		lines = append(lines, fmt.Sprintf("%s: %s", key, refused[key]))
	}
	return lines
}

const logTag = "v2import"
