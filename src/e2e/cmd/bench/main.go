// Command bench measures this release on the simulated CFCR cluster (3 masters, 2 workers) and, where it
// applies, a kubo-v0.21-style flanneld under the same bpm, given the three members' URLs: start-up times,
// the resident memory of the launcher and flanneld, and the etcd requests sent during steady state, read
// from every member's grpc_server_started_total. docs/benchmarks.md ("Simulated cluster") has figures.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/flannel-dns/flannel-dns/src/e2e/cluster"
	"github.com/flannel-dns/flannel-dns/src/e2e/cmd/simcluster"
	"github.com/flannel-dns/flannel-dns/src/e2e/procstats"
)

func main() {
	os.Exit(run())
}

func run() int {
	var cfg cluster.Config
	var opts options
	simcluster.Flags(&cfg)
	flag.DurationVar(&opts.steady, "steady", 10*time.Minute, "length of each steady-state window (one per variant)")
	flag.DurationVar(&opts.settle, "settle", 30*time.Second, "wait after the last start before a steady-state window opens")
	flag.IntVar(&opts.restarts, "restarts", 3, "restarts per worker and variant for the start-up figures")
	flag.IntVar(&opts.failovers, "failover", 0, "black-hole failovers per variant on worker-0, after the windows (each adds a worker)")
	flag.BoolVar(&opts.failoverStatic, "failover-static", true, "time the static variant's failovers too (each waits out --failover-limit)")
	flag.DurationVar(&opts.failoverLimit, "failover-limit", 2*time.Minute, "how long a failover may take before it counts as no route")
	flag.Parse()
	cfg.Logf = func(format string, args ...any) {
		fmt.Printf("    %s "+format+"\n", append([]any{time.Now().UTC().Format("15:04:05")}, args...)...)
	}
	session, err := simcluster.Start(cfg, "flannel-dns-bench-")
	defer session.Teardown()
	if err == nil {
		err = bench(session.Cluster, opts)
	}
	if err != nil {
		if session.Cluster != nil {
			fmt.Println(session.Cluster.LogTails(20))
		}
		fmt.Fprintln(os.Stderr, "Error:", err)
		return 1
	}
	return 0
}

type options struct {
	steady, settle, failoverLimit time.Duration
	restarts, failovers           int
	failoverStatic                bool
}

func bench(c *cluster.Cluster, opts options) error {
	fmt.Printf("==> load average at the start: %s\n", procstats.LoadAverage())
	if _, err := c.Deploy(3, 2); err != nil {
		return err
	}
	var launcher, static []startup
	for _, w := range c.Workers() {
		s, err := firstStart(w)
		if err != nil {
			return err
		}
		launcher = append(launcher, s)
	}
	if err := addStatic(c); err != nil {
		return err
	}
	if err := unwatch(c); err != nil {
		return err
	}
	startRequests := map[variant]counts{}
	for r := 0; r < opts.restarts; r++ {
		for _, w := range c.Workers() {
			s, err := counted(c, startRequests, launcherVariant, func() (startup, error) { return startLauncher(w) })
			if err != nil {
				return err
			}
			launcher = append(launcher, s)
			if s, err = counted(c, startRequests, staticVariant, func() (startup, error) { return startStatic(w) }); err != nil {
				return err
			}
			static = append(static, s)
		}
	}
	printStartups(launcher, static)
	for _, v := range []variant{launcherVariant, staticVariant} {
		fmt.Printf("\netcd requests started by %d starts of %s, all members:\n", opts.restarts*len(c.Workers()), v)
		printDelta(counts{}, startRequests[v])
	}

	for _, v := range []variant{launcherVariant, staticVariant} {
		if err := steadyState(c, v, opts); err != nil {
			return err
		}
	}
	if opts.failovers > 0 {
		fmt.Println("\n==> failover: the member carrying worker-0's watch black-holed, a new worker started")
	}
	for r := 0; r < opts.failovers; r++ {
		variants := []variant{launcherVariant}
		if opts.failoverStatic {
			variants = append(variants, staticVariant)
		}
		for _, v := range variants {
			if err := failover(c, v, opts.failoverLimit); err != nil {
				return err
			}
		}
	}
	fmt.Printf("\n==> load average at the end: %s\n", procstats.LoadAverage())
	return nil
}

// counted runs start and adds the etcd requests that every member started meanwhile to sum[v].
func counted(c *cluster.Cluster, sum map[variant]counts, v variant, start func() (startup, error)) (startup, error) {
	before, err := requests(c)
	if err != nil {
		return startup{}, err
	}
	s, err := start()
	if err != nil {
		return s, err
	}
	time.Sleep(3 * time.Second) // flanneld's requests after it wrote subnet.env (its watches) count too
	after, err := requests(c)
	if err != nil {
		return s, err
	}
	if sum[v] == nil {
		sum[v] = counts{}
	}
	for method, n := range after {
		sum[v][method] += n - before[method]
	}
	return s, nil
}
