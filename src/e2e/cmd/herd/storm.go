package main

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// stormResult is n watchers, held as flanneld 0.28 holds its watch on the subnets (an etcd v3 client with every
// member's URL, a prefix watch), when one member is killed: how long until each one sees a put made after the kill.
type stormResult struct {
	n         int
	victim    string          // "leader" or "follower"
	connect   []time.Duration // client created to its watch confirmed, all n within the spread
	seen      []time.Duration // kill to the put's event at the watcher
	rewatched int             // watchers that made their watch again (theirs was on the killed member)
	missed    int             // never saw it within the limit
	putDone   time.Duration   // kill to the put's success
	connected phase           // etcd while the watchers connected
	etcd      phase           // etcd from the kill to the last watcher seeing the put (the leader after it)
}

type watcher struct {
	client    *clientv3.Client
	began     time.Time
	connect   time.Duration // set before confirmed closes
	confirmed chan struct{}
	seen      time.Time // set before saw closes
	saw       chan struct{}
	rewatches atomic.Int32
}

// run watches prefix as flanneld 0.28's subnet registry does: a prefix watch that needs a leader, made again
// from the next revision after 100 ms, doubling up to 5 s, whenever it ends with an error or closes.
func (w *watcher) run(ctx context.Context, prefix string) {
	backoff, since := 100*time.Millisecond, int64(0)
	for {
		wctx, cancel := context.WithCancel(ctx)
		opts := []clientv3.OpOption{clientv3.WithPrefix(), clientv3.WithCreatedNotify()}
		if since > 0 {
			opts = append(opts, clientv3.WithRev(since))
		}
		for resp := range w.client.Watch(clientv3.WithRequireLeader(wctx), prefix, opts...) {
			if resp.Err() != nil {
				break
			}
			if resp.Created && since == 0 {
				w.connect = time.Since(w.began)
				close(w.confirmed)
			}
			w.note(resp.Events)
			if resp.Header.Revision != 0 {
				since = resp.Header.Revision + 1
			}
			backoff = 100 * time.Millisecond
		}
		cancel()
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		w.rewatches.Add(1)
		backoff = min(2*backoff, 5*time.Second)
	}
}

func (w *watcher) note(events []*clientv3.Event) {
	for _, ev := range events {
		if ev.Type == clientv3.EventTypePut && !isClosed(w.saw) {
			w.seen = time.Now()
			close(w.saw)
		}
	}
}

func (h *harness) runStorm(n int, killLeader bool, spread, limit time.Duration) (stormResult, error) {
	prefix := fmt.Sprintf("/storm-%d-%t/coreos.com/network/subnets/", n, killLeader)
	result := stormResult{n: n, victim: "follower"}
	if killLeader {
		result.victim = "leader"
	}
	leader, err := h.etcd.waitLeader()
	if err != nil {
		return result, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	samples := h.etcd.sample()
	watchers, err := h.watch(ctx, n, prefix, spread)
	defer closeWatchers(watchers)
	result.connected = summarize(samples.finish(h.etcd), leader)
	if err != nil {
		return result, err
	}
	for _, w := range watchers {
		result.connect = append(result.connect, w.connect)
	}

	victim := h.victim(leader, killLeader)
	samples = h.etcd.sample()
	killed := time.Now()
	h.etcd.kill(victim)
	if err := h.putUntilDone(prefix+"198.18.7.0-24", killed.Add(limit)); err != nil {
		return result, err
	}
	result.putDone = time.Since(killed)
	awaitEvents(watchers, killed.Add(limit))
	time.Sleep(time.Second)
	newLeader, err := h.etcd.waitLeader()
	result.etcd = summarize(samples.finish(h.etcd), newLeader)
	for _, w := range watchers {
		if w.rewatches.Load() > 0 {
			result.rewatched++
		}
		if !isClosed(w.saw) {
			result.missed++
			continue
		}
		result.seen = append(result.seen, w.seen.Sub(killed))
	}
	if err != nil {
		return result, err
	}
	return result, h.etcd.restart(victim)
}

func (h *harness) victim(leader int, killLeader bool) int {
	if killLeader {
		return leader
	}
	return (leader + 1) % len(h.etcd.members)
}

// watch connects n clients within spread, each watching prefix, and returns once every watch is confirmed.
func (h *harness) watch(ctx context.Context, n int, prefix string, spread time.Duration) ([]*watcher, error) {
	watchers := make([]*watcher, n)
	for i := range watchers {
		watchers[i] = &watcher{confirmed: make(chan struct{}), saw: make(chan struct{})}
	}
	err := startSpread(watchers, spread, func(w *watcher) error {
		w.began = time.Now()
		client, err := clientv3.New(clientv3.Config{Endpoints: h.etcd.endpoints(), TLS: h.tls.Clone(), Logger: zap.NewNop()})
		if err != nil {
			return bosherr.WrapError(err, "Creating a watcher's etcd client")
		}
		w.client = client
		go w.run(ctx, prefix)
		return nil
	})
	if err != nil {
		return watchers, err
	}
	deadline := time.After(time.Minute)
	for _, w := range watchers {
		select {
		case <-w.confirmed:
		case <-deadline:
			return watchers, bosherr.Error("Not every watch was confirmed within a minute")
		}
	}
	return watchers, nil
}

// putUntilDone writes key, trying again while etcd has no leader, until deadline.
func (h *harness) putUntilDone(key string, deadline time.Time) error {
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := h.kv.Put(ctx, key, `{"PublicIP":"192.0.2.7","BackendType":"vxlan"}`)
		cancel()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return bosherr.WrapErrorf(err, "Writing %s after the kill", key)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// awaitEvents waits until every watcher has seen a put, or deadline.
func awaitEvents(watchers []*watcher, deadline time.Time) {
	timeout := time.After(time.Until(deadline))
	for _, w := range watchers {
		select {
		case <-w.saw:
		case <-timeout:
			return
		}
	}
}

func closeWatchers(watchers []*watcher) {
	for _, w := range watchers {
		if w != nil && w.client != nil {
			_ = w.client.Close() // closing a client whose member died may report it; nothing to do
		}
	}
}
