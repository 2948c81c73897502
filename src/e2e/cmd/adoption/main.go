// Command adoption runs the adoption rehearsal (src/e2e/adoption) at full size: a kubo cluster (3 masters, 5 workers
// by default) switched to flannel-dns by the director's roll, one worker recreated mid-roll, then a master scale.
// It prints a line per step and the table that docs/adoption.md reports. Needs root, and what
// src/e2e/prepare.sh sets up.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/flannel-dns/flannel-dns/src/e2e/adoption"
	"github.com/flannel-dns/flannel-dns/src/e2e/cluster"
	"github.com/flannel-dns/flannel-dns/src/e2e/cmd/simcluster"
)

func main() {
	os.Exit(run())
}

func run() int {
	var cfg cluster.Config
	kubo := &cluster.Kubo{}
	var plan adoption.Plan
	simcluster.Flags(&cfg)
	flag.IntVar(&plan.Masters, "masters", 3, "masters")
	flag.IntVar(&plan.Workers, "workers", 5, "workers")
	flag.StringVar(&plan.Recreate, "recreate", "worker/0", "the instance the roll recreates instead of updating (\"\" for none)")
	flag.DurationVar(&plan.Settle, "settle", 3*time.Second, "probing after each step, inside its window")
	podNetwork := flag.String("pod-network", "", "another pod network for kubo and flannel-dns (a small one shows collisions)")
	flag.Parse()
	cfg.Kubo = kubo
	cfg.Logf = func(format string, args ...any) {
		fmt.Printf("    %s "+format+"\n", append([]any{time.Now().UTC().Format("15:04:05")}, args...)...)
	}
	if *podNetwork != "" {
		ops, err := podNetworkOps(*podNetwork)
		if err != nil {
			fmt.Fprintln(os.Stderr, "Error:", err)
			return 1
		}
		defer os.Remove(ops)
		kubo.OpsFiles = []string{ops}
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

// podNetworkOps writes a temporary ops-file that sets both flanneld jobs' pod network (kubo's and flannel-dns's).
func podNetworkOps(cidr string) (string, error) {
	f, err := os.CreateTemp("", "pod-network-*.yml")
	if err != nil {
		return "", err
	}
	defer f.Close()
	for _, group := range []string{"master", "worker"} {
		_, err = fmt.Fprintf(f, "- type: replace\n  path: /instance_groups/name=%s/jobs/name=flanneld/properties?/pod-network-cidr\n  value: %s\n", group, cidr)
	}
	return f.Name(), err
}
