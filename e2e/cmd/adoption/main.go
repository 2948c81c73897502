// Command adoption runs the adoption rehearsal (e2e/adoption) at full size: a kubo cluster (3 masters, 5 workers
// by default) switched to flannel-dns by the director's roll, one worker recreated mid-roll, then a master scale.
// It prints a line per step and the table that docs/adoption.md reports. Needs root, and what
// e2e/prepare.sh sets up.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/flannel-dns/flannel-dns/e2e/adoption"
	"github.com/flannel-dns/flannel-dns/e2e/cluster"
	"github.com/flannel-dns/flannel-dns/e2e/cmd/simcluster"
)

func main() {
	os.Exit(run())
}

func run() int {
	var cfg cluster.Config
	kubo := &cluster.Kubo{}
	var plan adoption.Plan
	simcluster.Flags(&cfg)
	cache := os.Getenv("FLANNEL_DNS_CACHE")
	if cache == "" {
		cache = "/var/cache/flannel-dns"
	}
	flag.StringVar(&kubo.EtcdBin, "kubo-etcd-bin", filepath.Join(cache, "etcd-3.4"), "directory holding etcd 3.4 and etcdctl")
	flag.StringVar(&kubo.Flanneld, "kubo-flanneld", filepath.Join(cache, "flannel-0.12.0"), "directory holding flannel v0.12.0's flanneld")
	flag.IntVar(&plan.Masters, "masters", 3, "masters")
	flag.IntVar(&plan.Workers, "workers", 5, "workers")
	flag.StringVar(&plan.Recreate, "recreate", "worker/0", "the instance the roll recreates instead of updating (\"\" for none)")
	flag.DurationVar(&plan.Settle, "settle", 3*time.Second, "probing after each step, inside its window")
	flag.Parse()
	cfg.Kubo = kubo
	cfg.Logf = func(format string, args ...any) {
		fmt.Printf("    %s "+format+"\n", append([]any{time.Now().UTC().Format("15:04:05")}, args...)...)
	}
	session, err := simcluster.Start(cfg, "flannel-dns-adoption-")
	defer session.Teardown()
	if err != nil {
		fmt.Fprintln(os.Stderr, "Error:", err)
		return 1
	}
	res, err := adoption.Run(session.Cluster, plan, func(s adoption.Step) { fmt.Println("--> " + adoption.Progress(s)) })
	fmt.Println()
	_ = adoption.WriteTable(os.Stdout, res)
	if err != nil {
		fmt.Println(session.Cluster.LogTails(30))
		fmt.Fprintln(os.Stderr, "Error:", err)
		return 1
	}
	return 0
}
