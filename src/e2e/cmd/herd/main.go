// Command herd measures what many workers starting at once cost etcd and the DNS server, against kubo's way:
// N flannel-launchers (recordingflanneld as flanneld) started within a second against three real etcd
// processes with mutual TLS; N `etcdctl put`s of the network config as kubo's flanneld_ctl wrote it on every
// start; N watchers held as flanneld holds its subnet watch while one member is killed; and the DNS queries
// the launchers send once flanneld runs. docs/benchmarks.md ("Scale") has the figures.
//
//	go run ./src/e2e/cmd/herd --etcd-bin /var/cache/flannel-dns/etcd-3.6.16 --n 50,100,200
package main

import (
	"github.com/flannel-dns/flannel-dns/src/testenv/cache"

	"crypto/tls"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/flannel-dns/flannel-dns/src/e2e/procstats"
	"github.com/flannel-dns/flannel-dns/src/testenv/dnsserver"
	"github.com/flannel-dns/flannel-dns/src/testenv/pki"
)

type options struct {
	etcdBin     string
	sizes       []int
	spread      time.Duration
	limit       time.Duration
	dnsWindow   time.Duration
	traceWindow time.Duration
	kubo, storm bool
	keep        bool
	isolate     bool
	launcher    string // a launcher binary to measure instead of building this tree's
}

func main() {
	os.Exit(run())
}

func run() int {
	opts, err := parseFlags()
	if err != nil {
		fmt.Fprintln(os.Stderr, "Error:", err)
		return 2
	}
	h, err := setUp(opts)
	defer h.tearDown(opts.keep)
	if err == nil {
		err = h.measure(opts)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "Error:", err)
		return 1
	}
	return 0
}

func parseFlags() (options, error) {
	var opts options
	var sizes string
	flag.StringVar(&opts.etcdBin, "etcd-bin", cache.Path("etcd-3.6.16"), "directory with etcd and etcdctl")
	flag.StringVar(&sizes, "n", "1,50,100,200", "herd sizes, comma-separated")
	flag.DurationVar(&opts.spread, "spread", time.Second, "the herd's starts are spread evenly over this")
	flag.DurationVar(&opts.limit, "limit", 2*time.Minute, "how long a herd may take to start flanneld before the rest count as not started")
	flag.DurationVar(&opts.dnsWindow, "dns-window", 30*time.Second, "window for counting the herd's DNS queries once every flanneld runs")
	flag.DurationVar(&opts.traceWindow, "trace-window", 25*time.Second, "how long one launcher runs under strace")
	flag.BoolVar(&opts.kubo, "kubo", true, "measure kubo's way beside each herd")
	flag.BoolVar(&opts.storm, "storm", true, "measure the reconnect storm for each size, a follower killed, then the leader")
	flag.BoolVar(&opts.isolate, "isolate", false, "pin etcd to the first CPU and everything else (launchers, etcdctl, watchers, this harness) to the last, "+
		"as on a cluster where etcd has its masters' CPUs and each launcher its own VM's")
	flag.BoolVar(&opts.keep, "keep", false, "keep the working directory (logs, configs, etcd data)")
	flag.StringVar(&opts.launcher, "launcher", "", "a flannel-launcher binary to measure (another commit's) instead of building this tree's")
	flag.Parse()
	for _, field := range strings.Split(sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(field))
		if err != nil || n < 1 {
			return opts, bosherr.Errorf("--n: '%s' is not a positive number", field)
		}
		opts.sizes = append(opts.sizes, n)
	}
	return opts, nil
}

// harness is what every measurement shares: the PKI, etcd, the DNS server serving the alias, the binaries.
type harness struct {
	dir                string
	etcdBin            string
	ca                 *pki.CA
	client             pki.Pair
	etcd               *etcd
	dns                *dnsserver.Server
	launcher, flanneld string
	tls                *tls.Config
	kv                 *clientv3.Client
}

const alias = "etcd.test.internal"

func setUp(opts options) (*harness, error) {
	h := &harness{etcdBin: opts.etcdBin}
	var err error
	if h.dir, err = os.MkdirTemp("", "flannel-dns-herd-"); err != nil {
		return h, bosherr.WrapError(err, "Creating the working directory")
	}
	if err := h.build(opts.launcher); err != nil {
		return h, err
	}
	if h.ca, err = pki.NewCA(h.dir, "etcd-ca"); err != nil {
		return h, err
	}
	if h.client, err = h.ca.Issue(pki.Client("flanneld")); err != nil {
		return h, err
	}
	etcdCPU := -1
	if opts.isolate {
		etcdCPU = 0
		if err := pin(os.Getpid(), numCPU()-1); err != nil {
			return h, err
		}
	}
	if h.etcd, err = startEtcd(opts.etcdBin, filepath.Join(h.dir, "etcd"), h.ca, alias, 3, etcdCPU); err != nil {
		return h, err
	}
	if h.dns, err = dnsserver.Start(); err != nil {
		return h, err
	}
	h.etcd.publish(h.dns)
	info := transport.TLSInfo{CertFile: h.client.CertFile, KeyFile: h.client.KeyFile, TrustedCAFile: h.ca.CertFile}
	if h.tls, err = info.ClientConfig(); err != nil {
		return h, bosherr.WrapError(err, "Loading the client certificate")
	}
	if h.kv, err = clientv3.New(clientv3.Config{Endpoints: h.etcd.endpoints(), TLS: h.tls.Clone(), Logger: zap.NewNop()}); err != nil {
		return h, bosherr.WrapError(err, "Creating the harness's etcd client")
	}
	return h, nil
}

// build compiles the launcher, unless one is given, and the stand-in flanneld, as the benchmarks in
// src/flannel-launcher/launch do.
func (h *harness) build(launcher string) error {
	h.launcher, h.flanneld = filepath.Join(h.dir, "flannel-launcher"), filepath.Join(h.dir, "recordingflanneld")
	packages := map[string]string{h.flanneld: "./src/testenv/recordingflanneld"}
	if launcher == "" {
		packages[h.launcher] = "./src/flannel-launcher/cmd/flannel-launcher"
	} else {
		var err error
		if h.launcher, err = filepath.Abs(launcher); err != nil {
			return bosherr.WrapErrorf(err, "Finding --launcher '%s'", launcher)
		}
	}
	for out, pkg := range packages {
		args := []string{"build", "-o", out}
		if out == h.launcher { // as packages/flannel-launcher/packaging builds it: static, without symbols
			args = append(args, "-trimpath", "-ldflags=-s -w")
		}
		build := exec.Command("go", append(args, pkg)...)
		if out == h.launcher {
			build.Env = append(os.Environ(), "CGO_ENABLED=0")
		}
		if output, err := build.CombinedOutput(); err != nil {
			return bosherr.WrapErrorf(err, "Building %s (run from the repository's root): %s", pkg, output)
		}
	}
	return nil
}

func (h *harness) tearDown(keep bool) {
	if h.kv != nil {
		_ = h.kv.Close() // the cluster goes next
	}
	if h.dns != nil {
		_ = h.dns.Close() // nothing left to ask it
	}
	if h.etcd != nil {
		h.etcd.stop()
	}
	if keep {
		fmt.Println("kept:", h.dir)
	} else if h.dir != "" {
		os.RemoveAll(h.dir)
	}
}

func (h *harness) measure(opts options) error {
	fmt.Printf("==> %s, %s; load average %s; etcd data on %s; etcd pinned to CPU %d (-1: not pinned)\n",
		time.Now().UTC().Format("2006-01-02 15:04 MST"), machine(), procstats.LoadAverage(), h.etcd.dir, h.etcd.cpu)
	trace, err := h.traceLauncher(opts.traceWindow)
	if err != nil {
		return err
	}
	printTrace(trace)
	var rep report
	for _, n := range opts.sizes {
		if err := h.measureSize(n, opts, &rep); err != nil {
			return err
		}
	}
	rep.print()
	return nil
}

func (h *harness) measureSize(n int, opts options, rep *report) error {
	fmt.Printf("==> N=%d (load average %s)\n", n, procstats.LoadAverage())
	result, herd, err := h.runHerd(n, opts.spread, opts.limit)
	if err == nil {
		rep.dns = append(rep.dns, h.measureDNSRate(n, opts.dnsWindow))
	}
	stopHerd(herd)
	if err != nil {
		return err
	}
	rep.herds = append(rep.herds, result)
	printHerd(result)
	if opts.kubo {
		kubo, err := h.runKubo(n, opts.spread)
		if err != nil {
			return err
		}
		rep.kubo = append(rep.kubo, kubo)
		printKubo(kubo)
	}
	if !opts.storm {
		return nil
	}
	for _, killLeader := range []bool{false, true} {
		storm, err := h.runStorm(n, killLeader, opts.spread, opts.limit)
		if err != nil {
			return err
		}
		rep.storms = append(rep.storms, storm)
		printStorm(storm)
	}
	return nil
}

func machine() string {
	cpus, _ := os.ReadFile("/sys/fs/cgroup/cpu.max") // absent outside a cgroup v2 limit
	return fmt.Sprintf("%d CPUs online (cgroup cpu.max %s)", numCPU(), strings.TrimSpace(string(cpus)))
}
