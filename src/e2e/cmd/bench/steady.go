package main

import (
	"fmt"
	"sort"
	"strings"
	"time"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"

	"github.com/flannel-dns/flannel-dns/src/e2e/cluster"
	"github.com/flannel-dns/flannel-dns/src/e2e/etcdmetrics"
	"github.com/flannel-dns/flannel-dns/src/e2e/procstats"
	"github.com/flannel-dns/flannel-dns/src/e2e/worker"
)

// counts is grpc_server_started_total of every member, by "service/method".
type counts = etcdmetrics.Counts

// steadyState runs variant on every worker, waits, then counts the etcd requests that every member
// started to serve during opts.steady, and reads the processes' memory at the end.
func steadyState(c *cluster.Cluster, v variant, opts options) error {
	fmt.Printf("\n==> steady state, %s, on every worker\n", v)
	for _, w := range c.Workers() {
		if _, err := startVariant(w, v); err != nil {
			return err
		}
	}
	time.Sleep(opts.settle)
	before, err := requests(c)
	if err != nil {
		return err
	}
	start := time.Now()
	c.Logf("window opened; counting etcd requests for %s (load average %s)", opts.steady, procstats.LoadAverage())
	time.Sleep(opts.steady)
	after, err := requests(c)
	if err != nil {
		return err
	}
	fmt.Printf("etcd requests started in %s, all members (load average at the end %s):\n", time.Since(start).Round(time.Second), procstats.LoadAverage())
	printDelta(before, after)
	fmt.Printf("  (the counters stood at %.0f requests in all when the window opened: they do count)\n", before.Total())
	for _, w := range c.Workers() {
		if err := printMemory(w, v); err != nil {
			return err
		}
	}
	return nil
}

// requests reads grpc_server_started_total from every member's /metrics (client port, client certificate).
func requests(c *cluster.Cluster) (counts, error) {
	total := counts{}
	for _, idx := range c.Masters() {
		host := fmt.Sprintf("master-%d.etcd.%s", idx, cluster.Domain)
		text, err := metrics(c.AnyMaster(), host)
		if err != nil {
			return nil, err
		}
		snap, err := etcdmetrics.Parse(strings.NewReader(text))
		if err != nil {
			return nil, bosherr.WrapErrorf(err, "Reading the metrics of %s", host)
		}
		total = total.Plus(snap.Started())
	}
	return total, nil
}

func printDelta(before, after counts) {
	var methods []string
	sum := 0.0
	for method, n := range after {
		if d := n - before[method]; d > 0 {
			methods = append(methods, method)
			sum += d
		}
	}
	sort.Strings(methods)
	for _, method := range methods {
		fmt.Printf("  %-40s %6.0f\n", method, after[method]-before[method])
	}
	fmt.Printf("  %-40s %6.0f\n", "total", sum)
}

func printMemory(w *worker.Worker, v variant) error {
	pids := []int{staticPID(w)}
	if v == launcherVariant {
		pids = []int{w.LauncherPID(), w.FlanneldPID()}
	}
	for _, pid := range pids {
		m, err := procstats.ReadMemory(pid)
		if err != nil {
			return err
		}
		conns, err := procstats.ConnectionsTo(pid, 2379)
		if err != nil {
			return err
		}
		fmt.Printf("  %s %-16s pid %-7d VmRSS %6.1f MiB (RssAnon %5.1f, RssFile %5.1f), VmHWM %6.1f MiB; connections to etcd: %d\n",
			w.Name, m.Command, pid, mib(m.RSS), mib(m.Anon), mib(m.File), mib(m.Peak), conns)
	}
	return nil
}

func mib(bytes uint64) float64 { return float64(bytes) / (1 << 20) }
