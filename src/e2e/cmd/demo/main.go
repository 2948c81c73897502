// Command demo runs the master-scaling scenario on the simulated CFCR cluster with narration and prints
// the final table. scripts/demo builds what it needs and runs it.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/flannel-dns/flannel-dns/src/e2e/cluster"
	"github.com/flannel-dns/flannel-dns/src/e2e/cmd/simcluster"
	"github.com/flannel-dns/flannel-dns/src/e2e/network"
	"github.com/flannel-dns/flannel-dns/src/e2e/scenario"
	"github.com/flannel-dns/flannel-dns/src/e2e/timeline"
	"github.com/flannel-dns/flannel-dns/src/e2e/vm"
)

func main() {
	os.Exit(run())
}

func run() int {
	var cfg cluster.Config
	keep := flag.Bool("keep", false, "leave the cluster running at the end, with instructions")
	down := flag.Bool("down", false, "remove what a --keep run left behind, then exit")
	simcluster.Flags(&cfg)
	reportDir := flag.String("report-dir", "demo-report", "where to write report.txt and timeline.png")
	full := flag.Bool("full", false, "run every step of the end-to-end scenario (3->5, 5->3 and a replaced master too), about 15 minutes")
	flag.Parse()
	if *down {
		for _, sweep := range []func() error{network.SweepLeftovers, vm.SweepLeftovers} {
			if err := sweep(); err != nil {
				fmt.Fprintln(os.Stderr, "Error:", err)
				return 1
			}
		}
		return 0
	}
	cfg.Logf = func(format string, args ...any) { fmt.Printf("    "+format+"\n", args...) }

	session, err := simcluster.Start(cfg, "flannel-dns-demo-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "Error:", err)
		session.Teardown()
		return 1
	}
	plan := scenario.Short
	if *full {
		plan = scenario.Full
	}
	code := narrate(session.Cluster, plan, *reportDir)
	if *keep && code == 0 {
		session.Keep()
		instructions(session.Cluster, session.WorkDir)
		return 0
	}
	session.Teardown()
	return code
}

func narrate(c *cluster.Cluster, plan scenario.Plan, reportDir string) int {
	fmt.Println(`==> A CFCR deployment on simulated BOSH VMs: 3 masters running real etcd (TLS, client certificates),
    2 workers running this release's flanneld job (flannel-launcher + real flanneld, vxlan) under real bpm,
    real bosh-dns on every VM, two pods on each worker made through the real CNI plugins with the job's
    conflist, and a UDP probe between every pair of pods.
    Each step changes the manifest; the director's decision is simulated by rendering every job of every
    instance and comparing configuration hashes, for this release and for a kubo-v0.21-style flanneld job.`)
	start := time.Now()
	steps, err := scenario.Run(c, plan, 3*time.Second, func(s scenario.Step) { fmt.Println("--> " + scenario.Progress(s)) })
	fmt.Println()
	report, code := verdict(steps, err, time.Since(start))
	if err != nil {
		fmt.Println(c.LogTails(30))
		fmt.Fprintln(os.Stderr, "Error:", err)
	}
	if len(steps) > 0 {
		writeReport(reportDir, report, scenario.Timeline(steps, c.Prober.Buckets(steps[len(steps)-1].End)))
	}
	return code
}

// verdict prints the table and the verdict, and returns them as the report's text.
func verdict(steps []scenario.Step, runErr error, took time.Duration) (string, int) {
	var report strings.Builder
	out := io.MultiWriter(os.Stdout, &report)
	_ = scenario.WriteTable(out, steps)
	fmt.Fprintf(out, "\n(%s in all)\n", took.Round(time.Second))
	if runErr != nil {
		fmt.Fprintln(out, "\nFAILED:", runErr)
		return report.String(), 1
	}
	violations := append(scenario.Violations(steps), scenario.KuboContrast(steps)...)
	if len(violations) > 0 {
		fmt.Fprintln(out, "\nFAILED:")
		for _, v := range violations {
			fmt.Fprintln(out, "  "+v)
		}
		return report.String(), 1
	}
	fmt.Fprintln(out, `
PASSED: no worker was updated in any master step, every flanneld kept its PID and subnet, every lease
stayed in etcd, and the pods lost no probe while the masters changed. With the kubo-style job, every
worker would have been updated (and its pods restarted) at every master step.`)
	return report.String(), 0
}

// writeReport puts the report and the timeline image into dir and says where they are.
func writeReport(dir, report string, data timeline.Data) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "Error: creating the report directory:", err)
		return
	}
	text, image := filepath.Join(dir, "report.txt"), filepath.Join(dir, "timeline.png")
	if err := os.WriteFile(text, []byte(report), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "Error: writing the report:", err)
	}
	if err := timeline.WritePNG(image, data); err != nil {
		fmt.Fprintln(os.Stderr, "Error:", err)
	}
	fmt.Printf("\nReport: %s\nTimeline (events, probe RTT and loss, flanneld PIDs): %s\n", text, image)
}

func instructions(c *cluster.Cluster, work string) {
	w := c.Workers()[0]
	m := c.AnyMaster()
	fmt.Printf(`
The cluster is still running (--keep). Look around:
  ip netns list                                   # one namespace per VM and the switch
  %[1]s/var/vcap/sys/log/flanneld/flanneld.stderr.log   # the launcher's and flanneld's log (bpm's) on %[2]s
  nsenter --mount=/run/fde-mnt/%[3]s --net=/run/netns/%[3]s /var/vcap/jobs/flanneld/bin/flannel-check
                                                  # the operator's check on %[2]s, run on the VM
  nsenter --mount=/run/fde-mnt/%[3]s --net=/run/netns/%[3]s /var/vcap/jobs/bpm/bin/bpm list
  ip netns exec %[3]s ip route                    # routes to the other workers' pod subnets via flannel.1
  ip netns exec %[3]s ip addr show cni0           # the CNI bridge with the subnet's gateway, the pods' veths on it
  nsenter --mount=/run/fde-mnt/%[4]s --net=/run/netns/%[4]s getent hosts etcd.cfcr.internal
                                                  # what bosh-dns on %[5]s answers for the alias
Remove everything with: scripts/demo --down && rm -rf %[6]s
`, w.Root, w.Name, w.Namespace, m.Namespace, m.Name, filepath.Clean(work))
}
