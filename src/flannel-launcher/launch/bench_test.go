package launch_test

// Benchmarks of the real flannel-launcher binary against a three-member TLS etcd cluster and a DNS server in
// this process, with src/testenv/recordingflanneld as flanneld. docs/benchmarks.md has the commands and figures.
//
// With LAUNCHER_BASELINE set to another build of the launcher (an older commit's), the start benchmarks run
// that binary too, in turn with this tree's (A B A B ...), and report its figures beside them with the ratio
// taken pair by pair, so that both are measured under the same load.

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/onsi/gomega/gexec"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/config"
	"github.com/flannel-dns/flannel-dns/src/testenv/pki"
	"github.com/flannel-dns/flannel-dns/src/testenv/recordingflanneld/record"
)

// steadyStateWindow is how long BenchmarkSteadyState watches a running launcher.
const steadyStateWindow = time.Minute

var bench struct {
	once     sync.Once
	err      error
	env      *environment
	rsaOnce  sync.Once
	rsaErr   error
	rsaEnv   *environment // certificates with RSA 3072 keys
	launcher string
	baseline string // LAUNCHER_BASELINE: another build to measure beside this tree's
	flanneld string
	dir      string
}

// baselineEnv names the binary the start benchmarks measure beside this tree's launcher.
const baselineEnv = "LAUNCHER_BASELINE"

func TestMain(m *testing.M) {
	status := m.Run()
	if bench.env != nil {
		bench.env.close()
		os.RemoveAll(bench.dir)
	}
	if bench.rsaEnv != nil {
		bench.rsaEnv.close()
	}
	gexec.CleanupBuildArtifacts()
	os.Exit(status)
}

// benchSetup builds both binaries and starts the environment once for all benchmarks.
func benchSetup(b *testing.B) {
	bench.once.Do(func() {
		// as packages/flannel-launcher/packaging builds it: static, without symbols
		bench.launcher, bench.err = gexec.BuildWithEnvironment("github.com/flannel-dns/flannel-dns/src/flannel-launcher/cmd/flannel-launcher",
			append(os.Environ(), "CGO_ENABLED=0"), "-trimpath", "-ldflags=-s -w")
		if bench.err != nil {
			return
		}
		if bench.flanneld, bench.err = gexec.Build("github.com/flannel-dns/flannel-dns/src/testenv/recordingflanneld"); bench.err != nil {
			return
		}
		if bench.dir, bench.err = os.MkdirTemp("", "launch-bench-"); bench.err != nil {
			return
		}
		if bench.baseline = os.Getenv(baselineEnv); bench.baseline != "" {
			if _, bench.err = os.Stat(bench.baseline); bench.err != nil {
				return
			}
		}
		bench.env, bench.err = startEnvironment()
	})
	if bench.err != nil {
		b.Fatal(bench.err)
	}
}

// BenchmarkStartToExec: from starting the launcher to flanneld's first instruction, all members healthy.
func BenchmarkStartToExec(b *testing.B) {
	benchSetup(b)
	benchmarkStartToExec(b)
}

// BenchmarkStartToExecRSA3072: the same with every certificate's key RSA 3072, as the bosh CLI generates a
// manifest's certificates into its vars store (the simulated cluster's; CredHub's are RSA 2048). Each TLS
// handshake then costs both sides an RSA signature, milliseconds of CPU where ECDSA P-256 takes microseconds.
func BenchmarkStartToExecRSA3072(b *testing.B) {
	benchSetup(b)
	bench.rsaOnce.Do(func() { bench.rsaEnv, bench.rsaErr = startEnvironmentWith(pki.RSA(3072)) })
	if bench.rsaErr != nil {
		b.Fatal(bench.rsaErr)
	}
	benchmarkStartToExecIn(b, bench.rsaEnv, "bench-rsa")
}

// BenchmarkProcessStart: `flannel-launcher version` from start to exit, the share of BenchmarkStartToExec
// that is only the binary starting (loading, package init: the etcd client's protobuf registrations).
func BenchmarkProcessStart(b *testing.B) {
	benchSetup(b)
	runs := newPairedRuns()
	for range b.N {
		runs.each(func(binary string) (time.Duration, time.Duration) {
			cmd := exec.Command(binary, "version")
			started := time.Now()
			if err := cmd.Run(); err != nil {
				b.Fatal(err)
			}
			return time.Since(started), cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		})
	}
	runs.report(b, "")
}

// BenchmarkStartToExecBlackHoled: the same with one member accepting connections and never answering.
func BenchmarkStartToExecBlackHoled(b *testing.B) {
	benchSetup(b)
	if err := bench.env.cluster.BlackHole(2); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if err := bench.env.cluster.Restart(2); err != nil {
			b.Error(err)
		}
	})
	benchmarkStartToExec(b)
}

func benchmarkStartToExec(b *testing.B) {
	benchmarkStartToExecIn(b, bench.env, "bench")
}

// benchmarkStartToExecIn starts the launcher against env, with its network config under /<prefix>/network.
func benchmarkStartToExecIn(b *testing.B, env *environment, prefix string) {
	cfg := env.config(prefix, bench.flanneld)
	configFile := writeBenchConfig(b, cfg)
	runs := newPairedRuns()
	b.ResetTimer()
	for range b.N {
		runs.each(func(binary string) (time.Duration, time.Duration) {
			recordFile := newRecordFile(b)
			started := time.Now()
			launcher := startLauncher(b, binary, configFile, recordFile)
			rec := waitForFlanneld(b, recordFile)
			stopLauncher(b, launcher)
			// CPU over the launcher's whole run (start, a few ms running, stop): what the machine's load
			// does not inflate.
			return time.Unix(0, rec.Started).Sub(started), launcher.ProcessState.UserTime() + launcher.ProcessState.SystemTime()
		})
	}
	b.StopTimer()
	runs.report(b, "-p90-max")
	b.ReportMetric(ms(cfg.Timing.ProbeTimeout.D()), "ms-probe-timeout")
}

// pairedRuns keeps the wall and CPU times, in ms, of this tree's launcher and, when LAUNCHER_BASELINE is set,
// of the baseline run right after it.
type pairedRuns struct {
	wall, cpu, baseWall, baseCPU, ratio []float64
}

func newPairedRuns() *pairedRuns { return &pairedRuns{} }

// each runs this tree's launcher, then the baseline's; run returns the wall and CPU time of one run.
func (p *pairedRuns) each(run func(binary string) (wall, cpu time.Duration)) {
	wall, cpu := run(bench.launcher)
	p.wall, p.cpu = append(p.wall, ms(wall)), append(p.cpu, ms(cpu))
	if bench.baseline == "" {
		return
	}
	baseWall, baseCPU := run(bench.baseline)
	p.baseWall, p.baseCPU = append(p.baseWall, ms(baseWall)), append(p.baseCPU, ms(baseCPU))
	p.ratio = append(p.ratio, ms(wall)/ms(baseWall))
}

// report gives medians, and with spread "-p90-max" the p90 and maximum of the wall times too.
func (p *pairedRuns) report(b *testing.B, spread string) {
	reportSorted(b, p.wall, "ms", spread)
	reportSorted(b, p.cpu, "ms-cpu", "")
	if bench.baseline == "" {
		return
	}
	reportSorted(b, p.baseWall, "baseline-ms", spread)
	reportSorted(b, p.baseCPU, "baseline-ms-cpu", "")
	reportSorted(b, p.ratio, "ratio-to-baseline", "")
}

func reportSorted(b *testing.B, values []float64, unit, spread string) {
	slices.Sort(values)
	b.ReportMetric(values[len(values)/2], unit+"-median")
	if spread != "" {
		b.ReportMetric(values[len(values)*9/10], unit+"-p90")
		b.ReportMetric(values[len(values)-1], unit+"-max")
	}
}

// BenchmarkSteadyState: a launcher whose flanneld runs, watched for a minute: its resident memory and the
// etcd requests the cluster served meanwhile (the launcher is the cluster's only client).
func BenchmarkSteadyState(b *testing.B) {
	benchSetup(b)
	configFile := writeBenchConfig(b, bench.env.config("bench-steady", bench.flanneld))
	for range b.N {
		recordFile := newRecordFile(b)
		launcher := startLauncher(b, bench.launcher, configFile, recordFile)
		waitForFlanneld(b, recordFile)
		before, err := etcdRequestsServed()
		if err != nil {
			b.Fatal(err)
		}
		time.Sleep(steadyStateWindow)
		after, err := etcdRequestsServed()
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(after-before, "etcd-requests/min")
		b.ReportMetric(residentMiB(b, launcher.Process.Pid, "VmRSS"), "MiB-rss")
		b.ReportMetric(residentMiB(b, launcher.Process.Pid, "VmHWM"), "MiB-rss-peak")
		b.ReportMetric(residentMiB(b, launcher.Process.Pid, "RssAnon"), "MiB-rss-anon")
		b.ReportMetric(residentMiB(b, launcher.Process.Pid, "RssFile"), "MiB-rss-file")
		stopLauncher(b, launcher)
	}
}

func writeBenchConfig(b *testing.B, cfg config.Config) string {
	data, err := json.Marshal(cfg)
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(bench.dir, "launcher-"+strings.ReplaceAll(cfg.Etcd.Prefix, "/", "_")+".json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		b.Fatal(err)
	}
	return path
}

// newRecordFile names a file no earlier run has written: the benchmark framework runs each benchmark
// several times.
func newRecordFile(b *testing.B) string {
	dir, err := os.MkdirTemp(bench.dir, "run-")
	if err != nil {
		b.Fatal(err)
	}
	return filepath.Join(dir, "record.json")
}

func startLauncher(b *testing.B, binary, configFile, recordFile string) *exec.Cmd {
	cmd := exec.Command(binary, "run", "--config", configFile)
	cmd.Env = append(os.Environ(), record.FileEnv+"="+recordFile)
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	return cmd
}

func waitForFlanneld(b *testing.B, recordFile string) record.Record {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if rec, err := record.Read(recordFile); err == nil {
			return rec
		}
		time.Sleep(time.Millisecond)
	}
	b.Fatalf("flanneld did not start within 30s (no %s)", recordFile)
	return record.Record{}
}

func stopLauncher(b *testing.B, cmd *exec.Cmd) {
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		b.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		b.Fatal(err)
	}
}

// residentMiB reads one of the Vm* lines of /proc/<pid>/status.
func residentMiB(b *testing.B, pid int, field string) float64 {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if value, ok := strings.CutPrefix(line, field+":"); ok {
			kib, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(value), " kB"))
			if err != nil {
				b.Fatal(err)
			}
			return float64(kib) / 1024
		}
	}
	b.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

func ms(d time.Duration) float64 {
	return float64(d.Microseconds()) / 1000
}
