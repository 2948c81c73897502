package main

import (
	"fmt"
	"maps"
	"math"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/flannel-dns/flannel-dns/src/e2e/etcdmetrics"
)

// report gathers every size's results for the tables at the end.
type report struct {
	herds  []herdResult
	kubo   []kuboResult
	storms []stormResult
	dns    []dnsRate
}

func numCPU() int { return runtime.NumCPU() }

// quantile is the q-quantile of the durations (nearest rank), 0 for none.
func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	sorted := slices.Sorted(slices.Values(ds))
	return sorted[max(0, int(math.Ceil(q*float64(len(sorted))))-1)]
}

func spread(ds []time.Duration) string {
	if len(ds) == 0 {
		return "none"
	}
	return fmt.Sprintf("%s / %s / %s", ms(quantile(ds, 0.5)), ms(quantile(ds, 0.99)), ms(quantile(ds, 1)))
}

func sum(ds []time.Duration) time.Duration {
	var total time.Duration
	for _, d := range ds {
		total += d
	}
	return total
}

func ms(d time.Duration) string {
	if d >= 10*time.Second {
		return fmt.Sprintf("%.1f s", d.Seconds())
	}
	return fmt.Sprintf("%d ms", d.Milliseconds())
}

func seconds(v float64) string {
	if math.IsNaN(v) {
		return "none"
	}
	return fmt.Sprintf("%.1f ms", v*1000)
}

func methods(c etcdmetrics.Counts) string {
	var parts []string
	for _, m := range c.Methods() {
		parts = append(parts, fmt.Sprintf("%s %.0f", m[strings.LastIndexByte(m, '/')+1:], c[m]))
	}
	return strings.Join(parts, ", ")
}

// load is the leader's CPU over the phase, its busiest second, and all live members' CPU.
func load(p phase) string {
	return fmt.Sprintf("leader %.2f s (peak %.0f%% of a core), members %.2f s", p.leaderCPU.Seconds(), 100*p.leaderPeakCPU, p.membersCPU.Seconds())
}

func latency(p phase) string {
	return fmt.Sprintf("unary p99 %s (%0.f calls); leader WAL fsync p99 %s, backend commit p99 %s",
		seconds(p.unary.Quantile(0.99)), p.unary.Count, seconds(p.walFsync.Quantile(0.99)), seconds(p.backendCommit.Quantile(0.99)))
}

func printHerd(r herdResult) {
	fmt.Printf("launchers: %d; start to flanneld exec p50 / p99 / max: %s; gave up %d, not started within the limit %d; "+
		"retried %d; member probes left out %d\n", r.n, spread(r.startToRun), r.gaveUp, r.notYet, r.retried, r.leftOut)
	fmt.Printf("  launchers' CPU: %.2f s in all, median %.1f ms each\n", sum(r.launcherCPU).Seconds(),
		float64(quantile(r.launcherCPU, 0.5).Microseconds())/1000)
	printPhase(r.etcd, r.n)
	fmt.Printf("  network config written %d time(s)\n", r.configWrites)
}

func printKubo(r kuboResult) {
	fmt.Printf("kubo's way: %d etcdctl puts; start to exit p50 / p99 / max: %s; failed %d\n", r.n, spread(r.startToDone), r.failed)
	for _, f := range r.failures[:min(3, len(r.failures))] {
		fmt.Println("  failure:", f)
	}
	fmt.Printf("  etcdctl CPU: %.2f s in all, median %s each\n", sum(r.cpu).Seconds(), ms(quantile(r.cpu, 0.5)))
	printPhase(r.etcd, r.n)
	fmt.Printf("  network config written %d time(s)\n", r.configWrites)
}

func printStorm(r stormResult) {
	fmt.Printf("storm: %d watchers connected, confirmed p50 / p99 / max %s; etcd meanwhile:\n", r.n, spread(r.connect))
	printPhase(r.connected, r.n)
	fmt.Printf("  %s killed; put done %s after; watchers saw it p50 / p99 / max %s after the kill; missed %d; "+
		"watches made again %d\n", r.victim, ms(r.putDone), spread(r.seen), r.missed, r.rewatched)
	printPhase(r.etcd, r.n)
}

func printPhase(p phase, n int) {
	fmt.Printf("  etcd over %s: %.0f requests (%.1f per client), peak %.0f/s: %s\n", p.duration.Round(100*time.Millisecond),
		p.requests.Total(), p.requests.Total()/float64(n), p.peakRate, methods(p.requests))
	fmt.Printf("  %s; %s; proposals failed %.0f\n", load(p), latency(p), p.proposalsFailed)
	var slowest []string
	for _, m := range p.requests.Methods() {
		if h, ok := p.byMethod[m]; ok && h.Count > 0 {
			slowest = append(slowest, fmt.Sprintf("%s %s", m[strings.LastIndexByte(m, '/')+1:], seconds(h.Quantile(0.99))))
		}
	}
	fmt.Printf("  unary p99 by method: %s\n", strings.Join(slowest, ", "))
}

func printTrace(t traced) {
	fmt.Printf("one launcher under strace for %s, its resolver named by %s (nameserver %s):\n", t.window, t.resolvConf, t.nameserver)
	for _, dest := range slices.Sorted(maps.Keys(t.destinations)) {
		fmt.Printf("  %s: %d\n", dest, t.destinations[dest])
	}
	fmt.Printf("  connections to etcd: %d; files opened under /etc or its resolv.conf: %s\n", t.etcdConnects, strings.Join(t.opened, ", "))
}

// print writes the tables for docs/benchmarks.md.
func (r report) print() {
	fmt.Println("\n| N | start to exec p50 / p99 / max | gave up | retried | etcd requests (per launcher) | peak/s | etcd unary p99 | leader CPU | launchers' CPU (median each) | config writes |")
	fmt.Println("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
	for _, h := range r.herds {
		fmt.Printf("| %d | %s | %d (+%d not started) | %d | %.0f (%.1f) | %.0f | %s | %.2f s, peak %.0f%% | %.1f s (%s) | %d |\n",
			h.n, spread(h.startToRun), h.gaveUp, h.notYet, h.retried, h.etcd.requests.Total(), h.etcd.requests.Total()/float64(h.n),
			h.etcd.peakRate, seconds(h.etcd.unary.Quantile(0.99)), h.etcd.leaderCPU.Seconds(), 100*h.etcd.leaderPeakCPU,
			sum(h.launcherCPU).Seconds(), ms(quantile(h.launcherCPU, 0.5)), h.configWrites)
	}
	fmt.Println("\n| N | kubo: put start to exit p50 / p99 / max | failed | etcd requests (per node) | peak/s | etcd unary p99 | leader WAL fsync p99 | leader CPU | etcdctl CPU | config writes |")
	fmt.Println("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
	for _, k := range r.kubo {
		fmt.Printf("| %d | %s | %d | %.0f (%.1f) | %.0f | %s | %s | %.2f s, peak %.0f%% | %.1f s | %d |\n",
			k.n, spread(k.startToDone), k.failed, k.etcd.requests.Total(), k.etcd.requests.Total()/float64(k.n), k.etcd.peakRate,
			seconds(k.etcd.unary.Quantile(0.99)), seconds(k.etcd.walFsync.Quantile(0.99)), k.etcd.leaderCPU.Seconds(),
			100*k.etcd.leaderPeakCPU, sum(k.cpu).Seconds(), k.configWrites)
	}
	fmt.Println("\n| N | killed | watches confirmed p50 / p99 / max | kill to put done | kill to seen p50 / p99 / max | missed | made again | etcd requests after the kill | leader CPU | etcd unary p99 |")
	fmt.Println("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
	for _, s := range r.storms {
		fmt.Printf("| %d | %s | %s | %s | %s | %d | %d | %.0f | %.2f s, peak %.0f%% | %s |\n",
			s.n, s.victim, spread(s.connect), ms(s.putDone), spread(s.seen), s.missed, s.rewatched, s.etcd.requests.Total(),
			s.etcd.leaderCPU.Seconds(), 100*s.etcd.leaderPeakCPU, seconds(s.etcd.unary.Quantile(0.99)))
	}
	fmt.Println("\n| N | window | alias queries | per launcher per second | expected (A + AAAA per interval) |")
	fmt.Println("| --- | --- | --- | --- | --- |")
	for _, d := range r.dns {
		fmt.Printf("| %d | %s | %d | %.3f | %.3f |\n", d.n, d.window, d.queries, d.perNode, 2/d.interval.Seconds())
	}
}
