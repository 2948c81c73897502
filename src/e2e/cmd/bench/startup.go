package main

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"

	"github.com/flannel-dns/flannel-dns/src/e2e/cluster"
	"github.com/flannel-dns/flannel-dns/src/e2e/procstats"
	"github.com/flannel-dns/flannel-dns/src/e2e/worker"
)

type variant string

const (
	launcherVariant variant = "flannel-dns (launcher)"
	staticVariant   variant = "kubo-v0.21 style (static list)"
	launcherLog             = cluster.LauncherLog
	flanneldBin             = "/var/vcap/packages/flannel/bin/flanneld"
	bpmBin                  = "/var/vcap/jobs/bpm/bin/bpm"
	startProgram            = "/var/vcap/jobs/flanneld/bin/start"
	// flanneldSubnetFile is where flanneld writes its subnet file; subnet-publisher publishes it as
	// cluster.SubnetFile.
	flanneldSubnetFile = "/var/vcap/sys/run/flanneld/subnet.env"
)

// startup is one start of a worker's job process.
type startup struct {
	worker  string
	variant variant
	first   bool            // the deploy's start: no lease in etcd yet
	logExec time.Duration   // launcher's log: "starting" to "flanneld started" (launcher only)
	procExe time.Duration   // /proc start times: launcher process to flanneld process (launcher only)
	bpmExec time.Duration   // the start program's run (bin/start, or bpm start -p static) to flanneld's /proc start (restarts)
	bpmStop time.Duration   // monit's stop program (bpm stop) of the previous run (launcher restarts only)
	subnet  time.Duration   // /proc start time of the job's process to subnet.env's modification time
	program time.Duration   // start program run (bin/start, or bpm start -p static) to flanneld's subnet file (restarts only)
	phases  []time.Duration // flanneld's /proc start to each of flanneldPhases in its log (restarts only)
	steps   []time.Duration // the launcher's /proc start to each of launcherSteps in its log (launcher only)
}

// launcherLine matches the launcher's log lines: "[tag] 2026-12-02T16:00:00.123456789Z INFO - message".
var launcherLine = regexp.MustCompile(`^\[[^\]]*\] (\S+) [A-Z]+ - (.*)$`)

// The launcher formats the local time with a literal Z.
const launcherTime = "2006-01-02T15:04:05.000000000Z"

// logEvent is the time of the last launcher log line after offset whose message starts with prefix, and
// the rest of that message.
func logEvent(path string, offset int64, prefix string) (time.Time, string, error) {
	at, message, err := logMatch(path, offset, regexp.MustCompile("^"+regexp.QuoteMeta(prefix)))
	return at, strings.TrimPrefix(message, prefix), err
}

// logMatch is the time and message of the last launcher log line after offset whose message matches pattern.
func logMatch(path string, offset int64, pattern *regexp.Regexp) (time.Time, string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return time.Time{}, "", bosherr.WrapErrorf(err, "Reading the launcher's log")
	}
	if offset > int64(len(data)) {
		offset = 0
	}
	lines := strings.Split(string(data[offset:]), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		m := launcherLine.FindStringSubmatch(lines[i])
		if m == nil || !pattern.MatchString(m[2]) {
			continue
		}
		at, err := time.ParseInLocation(launcherTime, m[1], time.Local)
		if err != nil {
			return time.Time{}, "", bosherr.WrapErrorf(err, "Parsing the time of '%s'", lines[i])
		}
		return at, m[2], nil
	}
	return time.Time{}, "", bosherr.Errorf("No line matching '%s' in %s after byte %d", pattern, path, offset)
}

// firstStart measures the launcher's start in the first deploy, from what it left behind.
func firstStart(w *worker.Worker) (startup, error) {
	s, err := measureLauncher(w, 0)
	s.first = true
	return s, err
}

// startLauncher stops whatever flanneld runs on w and runs the job's start program (bin/start, which ends in
// bpm start), as monit does; the bench keeps monit from watching the job (unwatch), so that the two variants
// start the same way.
func startLauncher(w *worker.Worker) (startup, error) {
	stopped, err := stopFlanneld(w)
	if err != nil {
		return startup{}, err
	}
	offset := fileSize(w.Path(launcherLog))
	starting := time.Now()
	if _, err := w.VM.Run(startProgram); err != nil {
		return startup{}, err
	}
	if err := waitForSubnet(w); err != nil {
		return startup{}, err
	}
	s, err := measureLauncher(w, offset)
	if err != nil {
		return s, err
	}
	flanneldStart, err := procstats.Start(w.FlanneldPID())
	s.bpmExec, s.bpmStop = flanneldStart.Sub(starting), stopped
	if err != nil {
		return s, err
	}
	if s.phases, err = phases(w.Path(launcherLog), offset, flanneldStart); err != nil {
		return s, err
	}
	s.program, err = subnetWritten(w, flanneldSubnetFile, starting)
	return s, err
}

// unwatch has monit stop the flanneld job and stop watching it, so that it does not start the job again
// while the bench stops and starts flanneld itself.
func unwatch(c *cluster.Cluster) error {
	for _, w := range c.Workers() {
		if err := w.Agent.StopProcess(worker.Process); err != nil {
			return err
		}
	}
	return nil
}

// stopFlanneld stops the static flanneld and the launcher with bpm stop, and removes flanneld's subnet file and
// its published copy, so that the next start's file is new. It returns how long the launcher's bpm stop took.
func stopFlanneld(w *worker.Worker) (time.Duration, error) {
	if _, err := w.VM.Run(bpmBin, "stop", "flanneld", "-p", staticName); err != nil {
		return 0, err
	}
	stopping := time.Now()
	if _, err := w.VM.Run(bpmBin, "stop", "flanneld"); err != nil {
		return 0, err
	}
	stopped := time.Since(stopping)
	for _, file := range []string{flanneldSubnetFile, cluster.SubnetFile} {
		if err := os.Remove(w.Path(file)); err != nil && !os.IsNotExist(err) {
			return 0, bosherr.WrapErrorf(err, "Removing %s on %s", file, w.Name)
		}
	}
	return stopped, nil
}

func measureLauncher(w *worker.Worker, offset int64) (startup, error) {
	s := startup{worker: w.Name, variant: launcherVariant}
	path := w.Path(launcherLog)
	starting, _, err := logEvent(path, offset, "starting:")
	if err != nil {
		return s, err
	}
	exec, _, err := logEvent(path, offset, "flanneld started:")
	if err != nil {
		return s, err
	}
	s.logExec = exec.Sub(starting)
	launcher, flanneld := w.LauncherPID(), w.FlanneldPID()
	launcherStart, err := procstats.Start(launcher)
	if err != nil {
		return s, err
	}
	flanneldStart, err := procstats.Start(flanneld)
	if err != nil {
		return s, err
	}
	s.procExe = flanneldStart.Sub(launcherStart)
	s.steps = steps(path, offset, launcherStart)
	s.subnet, err = subnetWritten(w, cluster.SubnetFile, launcherStart)
	return s, err
}

// staticArgs are the arguments the launcher last gave flanneld on w, with -etcd-endpoints replaced by every
// member's URL, as kubo-release v0.21's control script renders them from the etcd link: by the member's name
// (master-N.etcd.cfcr.internal), which its certificate names.
func staticArgs(c *cluster.Cluster, w *worker.Worker) ([]string, error) {
	_, started, err := logEvent(w.Path(launcherLog), 0, "flanneld started:")
	if err != nil {
		return nil, err
	}
	_, quoted, found := strings.Cut(started, "args='")
	if !found {
		return nil, bosherr.Errorf("No args in the launcher's line 'flanneld started:%s'", started)
	}
	var urls []string
	for _, m := range c.Members() {
		urls = append(urls, m.ClientURL())
	}
	var args []string
	for _, arg := range strings.Fields(strings.TrimSuffix(quoted, "'")) {
		if strings.HasPrefix(arg, "-etcd-endpoints=") || strings.HasPrefix(arg, "--etcd-endpoints=") {
			arg = "-etcd-endpoints=" + strings.Join(urls, ",")
		}
		args = append(args, arg)
	}
	return args, nil
}

func waitForSubnet(w *worker.Worker) error {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if _, err := os.Stat(w.Path(cluster.SubnetFile)); err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return bosherr.Errorf("No subnet.env on %s after 2 minutes", w.Name)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// subnetWritten is how long after start file (a subnet file) was written.
func subnetWritten(w *worker.Worker, file string, start time.Time) (time.Duration, error) {
	info, err := os.Stat(w.Path(file))
	if err != nil {
		return 0, bosherr.WrapErrorf(err, "Reading %s on %s", file, w.Name)
	}
	return info.ModTime().Sub(start), nil
}

func fileSize(path string) int64 {
	info, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return info.Size()
}

func printStartups(launcher, static []startup) {
	fmt.Println("\n==> start-up (each sample; restarts find their lease in etcd, the first start does not)")
	fmt.Printf("%-10s %-32s %-7s %14s %14s %16s %18s\n", "WORKER", "VARIANT", "START", "LOG->EXEC ms", "PROC->EXEC ms", "PROC->SUBNET ms", "PROGRAM->SUBNET ms")
	for _, s := range append(slices.Clone(launcher), static...) {
		kind, program := "restart", msString(s.program)
		if s.first {
			kind, program = "first", "-"
		}
		logExec, procExe := "-", "-"
		if s.variant == launcherVariant {
			logExec, procExe = msString(s.logExec), msString(s.procExe)
		}
		subnet := "-"
		if s.subnet != 0 {
			subnet = msString(s.subnet)
		}
		fmt.Printf("%-10s %-32s %-7s %14s %14s %16s %18s\n", s.worker, s.variant, kind, logExec, procExe, subnet, program)
	}
	fmt.Println("\nrestarts, median (min to max):")
	fmt.Printf("  launcher: log start to flanneld exec %s; /proc start to flanneld start %s; /proc start to subnet.env %s\n",
		restarts(launcher, func(s startup) time.Duration { return s.logExec }),
		restarts(launcher, func(s startup) time.Duration { return s.procExe }),
		restarts(launcher, func(s startup) time.Duration { return s.subnet }))
	fmt.Printf("  launcher under bpm: bin/start to flanneld start %s; bpm stop %s\n",
		restarts(launcher, func(s startup) time.Duration { return s.bpmExec }),
		restarts(launcher, func(s startup) time.Duration { return s.bpmStop }))
	program := func(s startup) time.Duration { return s.program }
	fmt.Printf("  launcher under bpm: bin/start to the launcher's start %s\n",
		restarts(launcher, func(s startup) time.Duration { return s.bpmExec - s.procExe }))
	fmt.Printf("  static under bpm: bpm start -p %s to flanneld start %s\n", staticName,
		restarts(static, func(s startup) time.Duration { return s.bpmExec }))
	fmt.Printf("  start program to flanneld's subnet file: launcher (bin/start) %s; static (bpm start -p %s) %s; ratio of the medians %.2f\n",
		restarts(launcher, program), staticName, restarts(static, program), ratio(median(launcher, program), median(static, program)))
	fmt.Printf("  flanneld's start to its subnet file: launcher %s; static %s\n",
		restarts(launcher, func(s startup) time.Duration { return s.program - s.bpmExec }),
		restarts(static, func(s startup) time.Duration { return s.program - s.bpmExec }))
	printPhases(launcher, static)
}

// restarts summarises f over the samples that are not first starts.
func restarts(list []startup, f func(startup) time.Duration) string {
	return summary(durations(list, f))
}

func durations(list []startup, f func(startup) time.Duration) []time.Duration {
	var ds []time.Duration
	for _, s := range list {
		if !s.first {
			ds = append(ds, f(s))
		}
	}
	return ds
}

func median(list []startup, f func(startup) time.Duration) time.Duration {
	ds := durations(list, f)
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	return ds[len(ds)/2]
}

func ratio(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return a.Seconds() / b.Seconds()
}

func summary(ds []time.Duration) string {
	if len(ds) == 0 {
		return "-"
	}
	slices.Sort(ds)
	return fmt.Sprintf("%s ms (%s to %s)", msString(ds[len(ds)/2]), msString(ds[0]), msString(ds[len(ds)-1]))
}

func msString(d time.Duration) string { return fmt.Sprintf("%.0f", d.Seconds()*1000) }
