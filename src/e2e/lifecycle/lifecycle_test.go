package lifecycle_test

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/flannel-dns/flannel-dns/src/e2e/cluster"
	"github.com/flannel-dns/flannel-dns/src/e2e/clustertest"
	"github.com/flannel-dns/flannel-dns/src/e2e/worker"
)

// recoverBound proves recovery without being a timing test.
const recoverBound = 60 * time.Second

var _ = Describe("BOSH's lifecycle on the simulated VMs", Ordered, func() {
	var c *cluster.Cluster

	BeforeAll(func() { c = clustertest.Deploy(1, 3) })
	AfterEach(func() { clustertest.PrintLogsOnFailure(c) })

	It("gives a rebooted worker its subnet back without a new lease", func() {
		before := clustertest.Snapshot(c)
		rebooted := c.Workers()[1]
		untouched := othersThan(c, rebooted)
		witness := clustertest.StartWitness(c, untouched)
		leases := clustertest.LeaseCount(c)
		oldPID := before[rebooted.Name].PID

		monitLog := rebooted.Path("/var/vcap/monit/monit.log")
		logFrom := fileSize(monitLog)
		start := time.Now()
		docker := dockerBack(rebooted, before[rebooted.Name].Subnet)
		Expect(c.RebootWorker(rebooted)).To(Succeed())
		subnetBack := time.Since(start)
		Expect(cluster.Subnet(rebooted)).To(Equal(before[rebooted.Name].Subnet))
		var dockerOnSubnet time.Duration
		Eventually(docker).WithTimeout(recoverBound).Should(Receive(&dockerOnSubnet), "docker does not run with cni0 on the node's subnet")
		Expect(newText(monitLog, logFrom)).NotTo(ContainSubstring("'docker' failed to start"),
			"docker's first start after the boot failed (no subnet file yet?)")
		Expect(rebooted.FlanneldPID()).NotTo(Or(BeZero(), Equal(oldPID)), "flanneld was not started again")
		expectPodsIn(c, rebooted)

		// Every pod, the rebooted worker's included, answers again: a second of probes with no loss.
		Eventually(func() bool {
			now := time.Now()
			sent, lost := c.Prober.Loss(now.Add(-2*time.Second), now.Add(-time.Second))
			return sent > 0 && lost == 0
		}).WithTimeout(recoverBound).WithPolling(250 * time.Millisecond).Should(BeTrue())
		trafficBack := time.Since(start) - time.Second
		clustertest.Figure(fmt.Sprintf("reboot: docker on cni0 with the node's subnet after %.1f s; subnet back and pods made again after %.1f s, pod traffic after %.1f s",
			dockerOnSubnet.Seconds(), subnetBack.Seconds(), trafficBack.Seconds()))

		Expect(clustertest.LeaseCount(c)).To(Equal(leases), "the reboot took a new lease")
		Expect(cluster.Routes(c.Workers()[0], before[rebooted.Name].Subnet)).To(BeTrue(),
			"worker-0 no longer routes the rebooted worker's subnet")
		clustertest.ExpectNoLoss(witness, start)
		delete(before, rebooted.Name)
		clustertest.ExpectKept(c, before)
	})

	It("brings flanneld and docker back after a bosh stop and start of a worker, and its pods reach the others", func() {
		before := clustertest.Snapshot(c)
		w := c.Workers()[1]
		untouched := othersThan(c, w)
		witness := clustertest.StartWitness(c, untouched)
		subnet := before[w.Name].Subnet

		start := time.Now()
		Expect(c.StopWorker(w)).To(Succeed())
		Expect(w.Agent.PID(cluster.DockerProcess)).To(BeZero(), "docker still runs after the stop")
		Expect(w.FlanneldPID()).To(BeZero(), "flanneld still runs after the stop")
		stopped := time.Since(start)
		started := time.Now()
		docker := dockerBack(w, subnet)
		Expect(c.StartWorker(w)).To(Succeed())
		var dockerOnSubnet time.Duration
		Eventually(docker).WithTimeout(recoverBound).Should(Receive(&dockerOnSubnet), "docker does not run with cni0 on the node's subnet")
		Expect(cluster.Subnet(w)).To(Equal(subnet))
		// docker's start made cni0 anew, which detached the pods: kubelet makes them again.
		Expect(c.RestartPods(w)).To(Succeed())
		expectPodsIn(c, w)
		Eventually(func() bool {
			now := time.Now()
			sent, lost := c.Prober.Loss(now.Add(-2*time.Second), now.Add(-time.Second))
			return sent > 0 && lost == 0
		}).WithTimeout(recoverBound).WithPolling(250*time.Millisecond).Should(BeTrue(), "the pods do not reach each other again")
		clustertest.Figure(fmt.Sprintf("bosh stop took %.1f s; bosh start: docker on cni0 with the node's subnet after %.1f s, pod traffic after %.1f s",
			stopped.Seconds(), dockerOnSubnet.Seconds(), time.Since(started).Seconds()-1))
		clustertest.ExpectNoLoss(witness, start)
		delete(before, w.Name)
		clustertest.ExpectKept(c, before)
	})

	It("gives a recreated worker (new VM, empty disk, full lifecycle) its subnet back, routed by the others", func() {
		before := clustertest.Snapshot(c)
		old := c.Workers()[2]
		untouched := othersThan(c, old)
		witness := clustertest.StartWitness(c, untouched)
		oldDisk := old.Root

		start := time.Now()
		recreated, err := c.RecreateWorker(old)
		Expect(err).NotTo(HaveOccurred())
		took := time.Since(start)
		Expect(recreated.Root).NotTo(Equal(oldDisk))
		_, err = os.Stat(oldDisk)
		Expect(os.IsNotExist(err)).To(BeTrue(), "the old VM's disk is still there")
		Expect(cluster.Subnet(recreated)).To(Equal(before[old.Name].Subnet), "the lease of its address was not reused")
		expectPodsIn(c, recreated)
		for _, w := range untouched {
			Eventually(func() bool { return cluster.Routes(w, cluster.Subnet(recreated)) }).WithTimeout(recoverBound).
				Should(BeTrue(), "%s does not route the recreated worker's subnet", w.Name)
		}
		Eventually(func() bool {
			now := time.Now()
			sent, lost := c.Prober.Loss(now.Add(-2*time.Second), now.Add(-time.Second))
			return sent > 0 && lost == 0
		}).WithTimeout(recoverBound).WithPolling(250*time.Millisecond).Should(BeTrue(), "the pods do not reach each other again")
		clustertest.Figure(fmt.Sprintf("recreate: deployed in %.1f s, pod traffic back after %.1f s", took.Seconds(), time.Since(start).Seconds()-1))
		clustertest.ExpectNoLoss(witness, start)
		delete(before, old.Name)
		clustertest.ExpectKept(c, before)
	})

	// On a stemcell /var/vcap/sys/run is the agent's tmpfs, mode 1777: vcap can make entries there before the
	// first deploy and early in every boot. What vcap's links lead to must stay as it was, and the job run.
	It("takes nothing that vcap made in the run directory, before the first deploy and after a reboot", func() {
		old := c.Workers()[2]
		recreated, err := c.RecreateWorker(old, func(w *worker.Worker) error {
			expectAgentRunDir(w)
			plantAsVcap(w, firstDeployPlants)
			return nil
		})
		Expect(err).NotTo(HaveOccurred())
		expectUntouched(recreated)

		Expect(c.RebootWorker(recreated, func() error {
			expectAgentRunDir(recreated)
			plantAsVcap(recreated, bootPlants)
			return nil
		})).To(Succeed())
		expectUntouched(recreated)
		Expect(recreated.FlanneldPID()).NotTo(BeZero())
		expectPodsIn(c, recreated)
	})

	It("stops a deploy with a broken etcd CA at the canary's post-start, with the launcher's reason, and touches no other worker", func() {
		before := clustertest.Snapshot(c)
		launchers := map[string]int{}
		for _, w := range c.Workers() {
			launchers[w.Name] = w.LauncherPID()
		}

		_, err := c.DeployWithOps("testdata/broken-etcd-ca.yml")
		var roll *cluster.RollError
		Expect(errors.As(err, &roll)).To(BeTrue(), "the deploy did not stop at an instance: %v", err)
		clustertest.Figure("deploy with a broken CA: " + err.Error())
		Expect(roll.Instance).To(Equal("worker/0"))
		Expect(roll.Canary).To(BeTrue())
		Expect(err.Error()).To(ContainSubstring("post-start of job 'flanneld'"))
		Expect(err.Error()).To(ContainSubstring("etcd.ca_file"), "post-start does not give the launcher's reason")
		for _, w := range c.Workers()[1:] {
			Expect(w.LauncherPID()).To(Equal(launchers[w.Name]), "%s was touched", w.Name)
			Expect(w.FlanneldPID()).To(Equal(before[w.Name].PID), "%s was touched", w.Name)
		}

		_, err = c.DeployWithOps()
		Expect(err).NotTo(HaveOccurred(), "the fixed manifest did not deploy")
		for _, w := range c.Workers()[1:] {
			Expect(w.FlanneldPID()).To(Equal(before[w.Name].PID), "%s was updated by the fix although it never ran the broken CA", w.Name)
		}
		Expect(cluster.Subnet(c.Workers()[0])).To(Equal(before[c.Workers()[0].Name].Subnet))
	})
})

// othersThan lists the workers but w.
func othersThan(c *cluster.Cluster, w *worker.Worker) []*worker.Worker {
	var others []*worker.Worker
	for _, o := range c.Workers() {
		if o != w {
			others = append(others, o)
		}
	}
	return others
}

// expectPodsIn checks that w has its pods again, made through CNI in its subnet.
func expectPodsIn(c *cluster.Cluster, w *worker.Worker) {
	subnet := netip.MustParsePrefix(cluster.Subnet(w))
	Expect(c.Pods(w)).To(HaveLen(cluster.PodsPerWorker), "%s's pods were not made again", w.Name)
	for _, p := range c.Pods(w) {
		Expect(subnet.Masked().Contains(p.Address)).To(BeTrue(), "%s's %s is outside %s", p.Name, p.Address, subnet)
	}
}

// dockerBack waits, in the background, until docker is gone from w and then runs again with cni0 on subnet, and
// sends how long after the call that was.
func dockerBack(w *worker.Worker, subnet string) <-chan time.Duration {
	since := time.Now()
	back := make(chan time.Duration, 1)
	go func() {
		defer GinkgoRecover()
		for gone := false; time.Since(since) < 5*time.Minute; time.Sleep(50 * time.Millisecond) {
			if !gone {
				gone = w.Agent.PID(cluster.DockerProcess) == 0
				continue
			}
			if cluster.DockerOnSubnet(w, subnet) {
				back <- time.Since(since)
				return
			}
		}
	}()
	return back
}

func fileSize(path string) int64 {
	info, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return info.Size()
}

// newText is what path holds after its first from bytes.
func newText(path string, from int64) string {
	data, err := os.ReadFile(path)
	Expect(err).NotTo(HaveOccurred())
	if from > int64(len(data)) {
		return string(data)
	}
	return string(data[from:])
}

// Root's files that vcap's links lead to: one that exists (standing for /etc/shadow) and one that root would
// create (standing for /etc/nologin), and a directory of root's that bin/start would chown.
const (
	rootsFile   = "/var/vcap/data/planted/shadow"
	missingFile = "/var/vcap/data/planted/nologin"
	rootsDir    = "/var/vcap/data/planted/dir"
)

// firstDeployPlants are what vcap leaves on a new VM: bpm's pidfile of flanneld, the publisher's pidfile and
// flanneld's directory as links; bootPlants what it leaves early in a boot, while other jobs' bpm directories
// may already be root's.
const (
	firstDeployPlants = `set -e
cd /var/vcap/sys/run
mkdir -p bpm/flanneld flanneld-subnet-publisher
ln -s ` + missingFile + ` bpm/flanneld/flanneld.pid
ln -s ` + rootsFile + ` flanneld-subnet-publisher/subnet-publisher.pid
ln -s ` + rootsDir + ` flanneld`
	bootPlants = `set -e
cd /var/vcap/sys/run
mkdir flanneld-subnet-publisher
ln -s ` + rootsFile + ` flanneld-subnet-publisher/subnet-publisher.pid
ln -s ` + rootsDir + ` flanneld`
)

// plantAsVcap makes root's targets on w and then runs script as vcap there.
func plantAsVcap(w *worker.Worker, script string) {
	GinkgoHelper()
	_, err := w.Run("sh", "-c", "set -e; mkdir -p "+rootsDir+"; [ -e "+rootsFile+" ] || echo root:secret >"+rootsFile+"; rm -f "+missingFile)
	Expect(err).NotTo(HaveOccurred())
	_, err = w.Run("setpriv", "--reuid=vcap", "--regid=vcap", "--init-groups", "sh", "-c", script)
	Expect(err).NotTo(HaveOccurred())
}

// expectAgentRunDir checks that w's run directory is what bosh-agent makes: a tmpfs of mode 1777, root:vcap.
func expectAgentRunDir(w *worker.Worker) {
	GinkgoHelper()
	out, err := w.Run("stat", "-f", "-c", "%T", "/var/vcap/sys/run/")
	Expect(err).NotTo(HaveOccurred())
	Expect(strings.TrimSpace(out)).To(Equal("tmpfs"))
	out, err = w.Run("stat", "-c", "%a %U:%G", "/var/vcap/sys/run/")
	Expect(err).NotTo(HaveOccurred())
	Expect(strings.TrimSpace(out)).To(Equal("1777 root:vcap"))
}

// expectUntouched checks that what vcap's links led to is as it was, and that the job's files in the run
// directory are root's (vcap's for flanneld's own directory), not links.
func expectUntouched(w *worker.Worker) {
	GinkgoHelper()
	out, err := w.Run("sh", "-c", "cat "+rootsFile+"; ls -A "+rootsDir+"; stat -c '%U' "+rootsDir+"; if [ -e "+missingFile+" ]; then echo nologin-made; else echo no-nologin; fi")
	Expect(err).NotTo(HaveOccurred())
	Expect(out).To(Equal("root:secret\nroot\nno-nologin\n"))
	out, err = w.Run("stat", "-c", "%n %F %U", "/var/vcap/sys/run/flanneld", "/var/vcap/sys/run/bpm/flanneld",
		"/var/vcap/sys/run/bpm/flanneld/flanneld.pid", "/var/vcap/sys/run/flanneld-subnet-publisher",
		"/var/vcap/sys/run/flanneld-subnet-publisher/subnet-publisher.pid")
	Expect(err).NotTo(HaveOccurred())
	Expect(strings.Split(strings.TrimSpace(out), "\n")).To(Equal([]string{
		"/var/vcap/sys/run/flanneld directory vcap",
		"/var/vcap/sys/run/bpm/flanneld directory root",
		"/var/vcap/sys/run/bpm/flanneld/flanneld.pid regular file root",
		"/var/vcap/sys/run/flanneld-subnet-publisher directory root",
		"/var/vcap/sys/run/flanneld-subnet-publisher/subnet-publisher.pid regular file root",
	}))
}
