package crashes_test

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/flannel-dns/flannel-dns/src/e2e/agent"
	"github.com/flannel-dns/flannel-dns/src/e2e/cluster"
	"github.com/flannel-dns/flannel-dns/src/e2e/clustertest"
	"github.com/flannel-dns/flannel-dns/src/e2e/procstats"
	"github.com/flannel-dns/flannel-dns/src/e2e/worker"
	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/status"
)

const (
	// readyBound proves that monit brings flanneld back; it is not a timing test (monit looks every 10 s and
	// gives a start program 30 s).
	readyBound = 3 * time.Minute
	// deadlineWatch is how long the unreachable-etcd spec watches a launcher whose startup deadline is 20 s.
	deadlineWatch = 150 * time.Second
	statusFile    = "/var/vcap/data/flanneld/status.json"
	monitLog      = "/var/vcap/monit/monit.log"
	cutTable      = "fde-crashes-cut"
)

var _ = Describe("monit on a worker, when flanneld's job crashes", Ordered, func() {
	var c *cluster.Cluster

	BeforeAll(func() { c = clustertest.Deploy(1, 3) })
	AfterEach(func() { clustertest.PrintLogsOnFailure(c) })

	for _, target := range []struct {
		name string
		pid  func(*worker.Worker) int
	}{
		{"flanneld", (*worker.Worker).FlanneldPID},
		{"the launcher", (*worker.Worker).LauncherPID},
		// bpm's container init (bpm 1.1 and later) or, under bpm 0.12.2 and 1.0.4, the launcher itself
		{"bpm's container process", func(w *worker.Worker) int { return w.Agent.PID(worker.Process) }},
	} {
		It("brings "+target.name+" back after SIGKILL, with the same subnet, the other workers' pods losing nothing", func() {
			crash(c, target.name, target.pid)
		})
	}

	It("restarts a launcher that cannot reach etcd each time its startup deadline passes, and nothing else on the VM", func() {
		_, err := c.DeployWithOps("testdata/short-startup-deadline.yml")
		Expect(err).NotTo(HaveOccurred())
		w := c.Workers()[1]
		before := clustertest.Snapshot(c)
		others := otherPIDs(w)
		offset := size(w.Path(monitLog))

		Expect(cutEtcd(w)).To(Succeed())
		DeferCleanup(func() { _ = uncutEtcd(w) })
		start := time.Now()
		killed, killedFlanneld := w.LauncherPID(), w.FlanneldPID()
		Expect(syscall.Kill(killed, syscall.SIGKILL)).To(Succeed())
		// The kernel takes flanneld down with the container's init a moment later: only what starts after counts.
		Eventually(func() bool { return procstats.Running(killed) || procstats.Running(killedFlanneld) }).
			WithTimeout(10 * time.Second).WithPolling(20 * time.Millisecond).Should(BeFalse())
		seen := watch(w, deadlineWatch)

		restarts := monitLines(w, offset, `'flanneld' trying to restart`)
		clustertest.Figure(fmt.Sprintf("etcd unreachable, startup deadline 20 s, over %s: %d launchers ran (%s), monit tried to restart flanneld %d times",
			deadlineWatch, len(seen.launchers), seen.launcherTimes(start), len(restarts)))
		clustertest.Figure("   monit's log: " + strings.Join(monitLines(w, offset, `'flanneld'`), "; "))
		clustertest.Figure("   monit said: " + strings.Join(seen.monit, " | "))
		clustertest.Figure("   the status file said: " + strings.Join(seen.status, " | "))
		clustertest.Figure("   health.json: " + clustertest.HealthLine(w.Agent.HealthSince(start), start))
		Expect(seen.flanneld).To(BeFalse(), "flanneld ran although etcd was out of reach")
		Expect(len(seen.launchers)).To(BeNumerically(">=", 2), "monit did not start the launcher again after its deadline")
		Expect(strings.Join(seen.status, "\n")).To(ContainSubstring("failed: "), "no launcher reported giving up")
		Expect(otherPIDs(w)).To(Equal(others), "another process of the VM was restarted")

		Expect(uncutEtcd(w)).To(Succeed())
		back := time.Now()
		Eventually(func() bool { return ready(w) }).WithTimeout(readyBound).WithPolling(250 * time.Millisecond).Should(BeTrue())
		clustertest.Figure(fmt.Sprintf("etcd reachable again: flanneld ready after %.1f s", time.Since(back).Seconds()))
		Expect(cluster.Subnet(w)).To(Equal(before[w.Name].Subnet))
	})
})

// crash kills, with SIGKILL, the process pid finds on worker-1 and measures how monit brings flanneld back.
func crash(c *cluster.Cluster, name string, pid func(*worker.Worker) int) {
	w := c.Workers()[1]
	before := clustertest.Snapshot(c)
	untouched := slices.DeleteFunc(c.Workers(), func(o *worker.Worker) bool { return o == w })
	witness := clustertest.StartWitness(c, untouched)
	leases := clustertest.LeaseCount(c)
	others := otherPIDs(w)
	offset := size(w.Path(monitLog))
	victim := pid(w)
	Expect(victim).NotTo(BeZero(), "no %s on %s", name, w.Name)

	start := time.Now()
	Expect(syscall.Kill(victim, syscall.SIGKILL)).To(Succeed())
	Eventually(func() bool { pid := w.FlanneldPID(); return pid != 0 && pid != before[w.Name].PID && ready(w) }).
		WithTimeout(readyBound).WithPolling(100*time.Millisecond).Should(BeTrue(), "flanneld is not back on %s", w.Name)
	readyAfter := time.Since(start)
	Eventually(func() bool {
		now := time.Now()
		sent, lost := c.Prober.Loss(now.Add(-2*time.Second), now.Add(-time.Second))
		return sent > 0 && lost == 0
	}).WithTimeout(readyBound).WithPolling(250*time.Millisecond).Should(BeTrue(), "the pods do not reach each other again")
	trafficBack := time.Since(start) - time.Second

	clustertest.Figure(fmt.Sprintf("SIGKILL of %s (pid %d) on %s: flanneld ready again after %.1f s, every pod answering after %.1f s",
		name, victim, w.Name, readyAfter.Seconds(), trafficBack.Seconds()))
	clustertest.Figure("   monit's log: " + strings.Join(monitLines(w, offset, `'flanneld'`), "; "))
	clustertest.Figure("   health.json: " + clustertest.HealthLine(w.Agent.HealthSince(start), start))
	Expect(cluster.Subnet(w)).To(Equal(before[w.Name].Subnet), "the subnet changed")
	Expect(clustertest.LeaseCount(c)).To(Equal(leases), "a new lease was taken")
	Expect(cluster.Routes(c.Workers()[0], before[w.Name].Subnet)).To(BeTrue(), "worker-0 no longer routes %s's subnet", w.Name)
	Expect(otherPIDs(w)).To(Equal(others), "another process of the VM was restarted")
	clustertest.ExpectNoLoss(witness, start)
	delete(before, w.Name)
	clustertest.ExpectKept(c, before)
}

// ready tells whether w's launcher reports flanneld ready and the subnet file is published.
func ready(w *worker.Worker) bool {
	st, err := status.Read(w.Path(statusFile))
	return err == nil && st.State == status.Ready && cluster.Subnet(w) != ""
}

// otherPIDs are the PIDs of every process that monit checks on w but flanneld's.
func otherPIDs(w *worker.Worker) map[string]int {
	pids := map[string]int{}
	for _, name := range w.Agent.Processes() {
		if name != worker.Process {
			pids[name] = w.Agent.PID(name)
		}
	}
	return pids
}

// seen is what watch saw of flanneld's job.
type seen struct {
	launchers map[int]time.Time // launcher PID -> when first seen
	flanneld  bool
	monit     []string // what monit said of the flanneld process, each change
	status    []string // the status file's state and reason, each change
}

// watch samples, for d, the launcher, flanneld, monit's view of the process and the launcher's status file.
func watch(w *worker.Worker, d time.Duration) seen {
	s := seen{launchers: map[int]time.Time{}}
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(250 * time.Millisecond) {
		if pid := w.LauncherPID(); pid != 0 && procstats.Running(pid) {
			if _, ok := s.launchers[pid]; !ok {
				s.launchers[pid] = time.Now()
			}
		}
		pid := w.FlanneldPID()
		s.flanneld = s.flanneld || (pid != 0 && procstats.Running(pid))
		s.monit = appendChange(s.monit, monitSays(w.Agent))
		if st, err := status.Read(w.Path(statusFile)); err == nil {
			s.status = appendChange(s.status, shorten(st.String()))
		}
	}
	return s
}

func (s seen) launcherTimes(start time.Time) string {
	var after []time.Duration
	for _, t := range s.launchers {
		after = append(after, t.Sub(start))
	}
	slices.Sort(after)
	var at []string
	for _, d := range after {
		at = append(at, fmt.Sprintf("%.0f s", d.Seconds()))
	}
	return "from " + strings.Join(at, ", ")
}

// monitSays is monit's state and message for flanneld.
func monitSays(a *agent.Agent) string {
	for _, line := range a.NotRunning() {
		if strings.HasPrefix(line, worker.Process+" ") {
			return line
		}
	}
	return worker.Process + " (running)"
}

func appendChange(list []string, s string) []string {
	if len(list) == 0 || list[len(list)-1] != s {
		return append(list, s)
	}
	return list
}

// retryAttempt is the part of a retrying reason that changes every attempt.
var retryAttempt = regexp.MustCompile(`attempt \d+: `)

func shorten(s string) string {
	s = retryAttempt.ReplaceAllString(s, "")
	if len(s) > 120 {
		s = s[:120] + "..."
	}
	return s
}

// monitLines are the lines of w's monit log after offset that match pattern, their times and messages.
func monitLines(w *worker.Worker, offset int64, pattern string) []string {
	data, err := os.ReadFile(w.Path(monitLog))
	Expect(err).NotTo(HaveOccurred())
	re := regexp.MustCompile(pattern)
	var lines []string
	for _, line := range strings.Split(string(data[offset:]), "\n") {
		if re.MatchString(line) {
			lines = append(lines, strings.Join(strings.Fields(line), " "))
		}
	}
	return lines
}

func size(path string) int64 {
	info, err := os.Stat(path)
	Expect(err).NotTo(HaveOccurred())
	return info.Size()
}

// cutEtcd drops what w sends to etcd's client port, in w's own namespace: only w loses etcd.
func cutEtcd(w *worker.Worker) error {
	_, err := w.Run("nft", fmt.Sprintf("add table inet %[1]s; add chain inet %[1]s output { type filter hook output priority 0; }; "+
		"add rule inet %[1]s output tcp dport 2379 drop", cutTable))
	return err
}

func uncutEtcd(w *worker.Worker) error {
	if _, err := w.Run("nft", "list", "table", "inet", cutTable); err != nil {
		return nil
	}
	_, err := w.Run("nft", "delete", "table", "inet", cutTable)
	return err
}
