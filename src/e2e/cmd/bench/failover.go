package main

import (
	"fmt"
	"time"

	"github.com/flannel-dns/flannel-dns/src/e2e/cluster"
	"github.com/flannel-dns/flannel-dns/src/e2e/worker"
)

// failover times, for variant v on worker-0, a lease written at once (leaseFailover), then a new worker's start,
// each while the member carrying worker-0's flanneld watch is black-holed (src/e2e/faults does the same for the
// launcher): from the fault to worker-0 routing the new subnet through flannel.1, given up after limit. Then it
// reconnects the member.
func failover(c *cluster.Cluster, v variant, limit time.Duration) error {
	observer := c.Workers()[0]
	pid, err := startVariant(observer, v)
	if err != nil {
		return err
	}
	time.Sleep(3 * time.Second) // flanneld's watch is up
	if err := leaseFailover(c, v, observer, pid, limit); err != nil {
		return err
	}
	carrier, err := c.WatchCarrierOf(observer, pid)
	if err != nil {
		return err
	}
	newcomer, err := c.PrepareWorker()
	if err != nil {
		return err
	}
	if err := leasesReadable(c); err != nil {
		return err
	}
	start := time.Now()
	if err := c.BlackHole(carrier); err != nil {
		return err
	}
	f, err := c.TimeStart(newcomer, start, observer, pid, carrier, limit)
	if err != nil {
		return err
	}
	c.Logf("%s: reconnecting %s", v, carrier.Name)
	reconnected := time.Now()
	if err := c.Reconnect(carrier); err != nil {
		return err
	}
	if err := carrier.WaitHealthy(2 * time.Minute); err != nil {
		return err
	}
	fmt.Printf("failover, %s on %s, %s black-holed (watch on it), %s started: routed %s; connections to it gone %s; lease in etcd %s\n",
		v, observer.Name, carrier.Name, newcomer.Name, seen(f.Routed, limit), seen(f.Dropped, limit), seen(f.Leased, limit))
	if f.Routed == 0 {
		fmt.Printf("  after the reconnect: %s\n", routedAfter(observer, newcomer, reconnected, 2*time.Minute))
	}
	return nil
}

// leaseFailover times observer's failover alone: the member carrying the watch of flanneld (process id pid) is
// black-holed and a lease written into etcd at once, as a new worker's flanneld would write it once its VM has
// started; then the member is reconnected.
func leaseFailover(c *cluster.Cluster, v variant, observer *worker.Worker, pid int, limit time.Duration) error {
	carrier, err := c.WatchCarrierOf(observer, pid)
	if err != nil {
		return err
	}
	if err := leasesReadable(c); err != nil {
		return err
	}
	start := time.Now()
	if err := c.BlackHole(carrier); err != nil {
		return err
	}
	f, err := c.TimeLease(start, observer, pid, carrier, limit)
	if err != nil {
		return err
	}
	c.Logf("%s: reconnecting %s", v, carrier.Name)
	if err := c.Reconnect(carrier); err != nil {
		return err
	}
	fmt.Printf("failover, %s on %s, %s black-holed (watch on it), a lease written %.1f s after: routed %s; connections to it gone %s\n",
		v, observer.Name, carrier.Name, f.Leased.Seconds(), seen(f.Routed, limit), seen(f.Dropped, limit))
	return carrier.WaitHealthy(2 * time.Minute)
}

// leasesReadable waits out a leader election that the last reconnect may have started (TimeStart lists
// the leases once, right after the fault, and a member answering "leader changed" then ends the run).
func leasesReadable(c *cluster.Cluster) error {
	deadline := time.Now().Add(time.Minute)
	for {
		_, err := c.Leases()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		c.Logf("leases not readable yet: %v", err)
		time.Sleep(time.Second)
	}
}

// startVariant restarts w's flanneld as v and returns flanneld's process id.
func startVariant(w *worker.Worker, v variant) (int, error) {
	if v == launcherVariant {
		_, err := startLauncher(w)
		return w.FlanneldPID(), err
	}
	_, err := startStatic(w)
	return staticPID(w), err
}

// routedAfter waits up to limit for observer to route newcomer's subnet and says how long after since it did.
func routedAfter(observer, newcomer *worker.Worker, since time.Time, limit time.Duration) string {
	for !cluster.Routes(observer, cluster.Subnet(newcomer)) {
		if time.Since(since) > limit {
			return fmt.Sprintf("still no route after %s", limit)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Sprintf("routed %.1f s after it", time.Since(since).Seconds())
}

func seen(d, limit time.Duration) string {
	if d == 0 {
		return fmt.Sprintf("not after %s", limit)
	}
	return fmt.Sprintf("after %.1f s", d.Seconds())
}
