package podnetwork_test

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/flannel-dns/flannel-dns/src/e2e/cluster"
	"github.com/flannel-dns/flannel-dns/src/e2e/clustertest"
	"github.com/flannel-dns/flannel-dns/src/e2e/cni"
	"github.com/flannel-dns/flannel-dns/src/e2e/network"
	"github.com/flannel-dns/flannel-dns/src/e2e/worker"
)

// The network name of the job's conflist: host-local keeps its addresses under /var/lib/cni/networks/<name>.
const networkName = "flannel-network"

// takenLease is a lease of another node, at an address no VM has, with a VTEP of its own.
const takenLease = `{"PublicIP":"192.0.2.250","BackendType":"vxlan","BackendData":{"VNI":1,"VtepMAC":"02:00:c0:00:02:fa"}}`

var _ = Describe("pods made through CNI with the job's conflist and the real plugins", Ordered, func() {
	var c *cluster.Cluster

	BeforeAll(func() { c = clustertest.Deploy(1, 2) })
	AfterEach(func() { clustertest.PrintLogsOnFailure(c) })

	It("puts every pod in its worker's subnet with flannel's MTU behind cni0, which carries the gateway", func() {
		for _, w := range c.Workers() {
			env, err := w.SubnetEnv(cluster.SubnetFile)
			Expect(err).NotTo(HaveOccurred())
			subnet := netip.MustParsePrefix(env["FLANNEL_SUBNET"])
			mtu, err := strconv.Atoi(env["FLANNEL_MTU"])
			Expect(err).NotTo(HaveOccurred())
			Expect(c.Pods(w)).To(HaveLen(cluster.PodsPerWorker))
			for _, p := range c.Pods(w) {
				Expect(subnet.Masked().Contains(p.Address)).To(BeTrue(), "%s's %s is outside %s", p.Name, p.Address, subnet)
				Expect(p.Prefix.Bits()).To(Equal(subnet.Bits()))
				Expect(p.Gateway).To(Equal(subnet.Addr()))
				Expect(linkMTU(p.Namespace, "eth0")).To(Equal(mtu), "eth0 of %s", p.Name)
				Expect(linkMTU(w.VM.Host.Namespace, p.HostVeth)).To(Equal(mtu), "the veth of %s", p.Name)
			}
			Expect(addresses(w, "cni0")).To(Equal([]string{subnet.String()}), "cni0 on %s", w.Name)
		}
	})

	It("runs the lane's plugins from kubelet's cni package, where its --cni-bin-dir points", func() {
		lane, err := cluster.LaneFromEnv()
		Expect(err).NotTo(HaveOccurred())
		for _, w := range c.Workers() {
			rt, err := c.Runtime(w)
			Expect(err).NotTo(HaveOccurred())
			installed, err := w.Run("readlink", "-e", rt.BinDir)
			Expect(err).NotTo(HaveOccurred(), "%s has no %s", w.Name, rt.BinDir)
			Expect(installed).To(HavePrefix("/var/vcap/data/packages/cni/"), "%s on %s", rt.BinDir, w.Name)
			out, err := w.Run("env", "CNI_COMMAND=VERSION", filepath.Join(rt.BinDir, "flannel"))
			Expect(err).NotTo(HaveOccurred())
			var info struct {
				Supported []string `json:"supportedVersions"`
			}
			Expect(json.Unmarshal([]byte(out), &info)).To(Succeed(), out)
			// v0.7.1 speaks CNI up to 0.3.1; the current lane's flannel plugin (v0.8.6) up to 0.4.0.
			Expect(info.Supported).To(HaveExactElements(supportedVersions[lane.CNI]), "flannel on %s", w.Name)
		}
	})

	It("carries traffic between pods on different workers over vxlan", func() {
		w0, w1 := c.Workers()[0], c.Workers()[1]
		Expect(cluster.Routes(w0, cluster.Subnet(w1))).To(BeTrue())
		Expect(cluster.Routes(w1, cluster.Subnet(w0))).To(BeTrue())
		start := time.Now()
		time.Sleep(2 * time.Second)
		end := time.Now()
		time.Sleep(time.Second)
		sent, lost := c.Prober.Loss(start, end)
		clustertest.Figure(fmt.Sprintf("probes among %d pods on 2 workers over 2 s: %d sent, %d lost", 2*cluster.PodsPerWorker, sent, lost))
		Expect(sent).To(BeNumerically(">", 0))
		Expect(lost).To(BeZero())
		before := vxlanPackets(w0)
		Expect(echo(c.Pods(w1)[0].Namespace, netip.AddrPortFrom(c.Pods(w0)[0].Address, 9000))).To(Succeed())
		Expect(vxlanPackets(w0)).To(BeNumerically(">", before), "the echo did not pass flannel.1 on %s", w0.Name)
	})

	It("answers a hostPort on one worker to a pod on another (portmap)", func() {
		w0, w1 := c.Workers()[0], c.Workers()[1]
		rt, err := c.Runtime(w0)
		Expect(err).NotTo(HaveOccurred())
		server, err := rt.Add("hostport", cni.PortMapping{HostPort: 30900, ContainerPort: 9000, Protocol: "udp"})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { Expect(rt.Del(server)).To(Succeed()) })
		Expect(c.Prober.Add(&server.Pod)).To(Succeed()) // the probe echoes on port 9000
		DeferCleanup(func() { c.Prober.Remove(server.Address) })

		hostPort := netip.AddrPortFrom(w0.Address, 30900)
		Expect(echo(c.Pods(w1)[0].Namespace, hostPort)).To(Succeed(), "no echo from %s", hostPort)
		Expect(echo(c.Pods(w1)[0].Namespace, netip.AddrPortFrom(w0.Address, 30901))).NotTo(Succeed(),
			"a port that is not mapped answered too")
	})

	It("removes a deleted pod's veth and frees its address", func() {
		w := c.Workers()[0]
		rt, err := c.Runtime(w)
		Expect(err).NotTo(HaveOccurred())
		pod, err := rt.Add("short-lived")
		Expect(err).NotTo(HaveOccurred())
		reservation := w.Path(filepath.Join("/var/lib/cni/networks", networkName, pod.Address.String()))
		Expect(reservation).To(BeAnExistingFile())
		Expect(links(w)).To(ContainElement(pod.HostVeth))

		Expect(rt.Del(pod)).To(Succeed())
		Expect(links(w)).NotTo(ContainElement(pod.HostVeth))
		Expect(reservation).NotTo(BeAnExistingFile(), "host-local still holds %s", pod.Address)
	})

	// kubo-release #228: the node comes back with a new subnet while cni0 keeps the old gateway, and the bridge
	// plugin refuses every new pod. cni0 must outlive the lease for that: a power cycle deletes it (and this
	// simulation's reboot does too), a `bosh stop` does not. While the jobs are stopped the lease expires and
	// another node takes the subnet, so flanneld cannot take it back from its subnet file. docker's start, which
	// monit runs beside flanneld's, makes cni0 anew from the subnet file of before the stop, at a moment of its
	// own: before or after the launcher first looks at cni0.
	It("starts new pods after the worker came back with a new subnet while cni0 kept the old gateway", func() {
		w := c.Workers()[1]
		old := netip.MustParsePrefix(cluster.Subnet(w))
		key, err := cluster.LeaseKey(old.String())
		Expect(err).NotTo(HaveOccurred())
		Expect(addresses(w, "cni0")).To(Equal([]string{old.String()}))

		Expect(c.StopWorker(w)).To(Succeed())
		_, err = c.AnyMaster().Etcdctl("put", key, takenLease)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() {
			_, err := c.AnyMaster().Etcdctl("del", key)
			Expect(err).NotTo(HaveOccurred())
		})
		Expect(c.StartWorker(w)).To(Succeed())
		Expect(w.Agent.PID(cluster.DockerProcess)).NotTo(BeZero(), "docker does not run")

		now := netip.MustParsePrefix(cluster.Subnet(w))
		Expect(now).NotTo(Equal(old), "flanneld got its old subnet back; the reproduction needs a new one")
		rt, err := c.Runtime(w)
		Expect(err).NotTo(HaveOccurred())
		pod, err := rt.Add("after-new-subnet")
		Expect(err).NotTo(HaveOccurred(), "the bridge plugin refused a new pod; cni0 has %v", addresses(w, "cni0"))
		Expect(now.Masked().Contains(pod.Address)).To(BeTrue())
		Expect(addresses(w, "cni0")).To(Equal([]string{now.String()}))
		Expect(rt.Del(pod)).To(Succeed())
		Expect(addresses(w, "cni0")).NotTo(ContainElement(old.String()), "cni0 keeps the old gateway")
		route, err := w.Run("ip", "-4", "route", "show", old.Masked().String())
		Expect(err).NotTo(HaveOccurred())
		Expect(route).NotTo(ContainSubstring("cni0"), "%s still routes the subnet it lost to its pods", w.Name)
		Expect(cluster.LogTail(w.Path("/var/vcap/sys/log/flanneld/flanneld.stderr.log"), 200)).To(
			ContainSubstring(fmt.Sprintf("Removed %s from the CNI bridge cni0", old)))

		// kubelet makes the old pods again (docker restarted with the job stop); then every pod reaches every other.
		Expect(c.RestartPods(w)).To(Succeed())
		for _, p := range c.Pods(w) {
			Expect(now.Masked().Contains(p.Address)).To(BeTrue())
		}
		Eventually(func() bool {
			t := time.Now()
			sent, lost := c.Prober.Loss(t.Add(-2*time.Second), t.Add(-time.Second))
			return sent > 0 && lost == 0
		}).WithTimeout(time.Minute).WithPolling(250 * time.Millisecond).Should(BeTrue())
	})

	It("measures pod creation through CNI (figure, not asserted)", func() {
		w := c.Workers()[0]
		rt, err := c.Runtime(w)
		Expect(err).NotTo(HaveOccurred())
		var adds, dels []time.Duration
		for i := 0; i < 20; i++ {
			start := time.Now()
			pod, err := rt.Add(fmt.Sprintf("timed-%d", i))
			Expect(err).NotTo(HaveOccurred())
			adds = append(adds, time.Since(start))
			start = time.Now()
			Expect(rt.Del(pod)).To(Succeed())
			dels = append(dels, time.Since(start))
		}
		clustertest.Figure(fmt.Sprintf("pod through CNI, 20 pods one after another: ADD median %s (min %s, max %s), DEL median %s",
			median(adds), slices.Min(adds), slices.Max(adds), median(dels)))
	})
})

// supportedVersions are the CNI versions the flannel plugin of each plugin set answers VERSION with.
var supportedVersions = map[string][]string{
	"0.7.1":   {"0.1.0", "0.2.0", "0.3.0", "0.3.1"},
	"current": {"0.1.0", "0.2.0", "0.3.0", "0.3.1", "0.4.0"},
}

func median(ds []time.Duration) time.Duration {
	sorted := slices.Clone(ds)
	slices.Sort(sorted)
	return sorted[len(sorted)/2].Round(time.Millisecond)
}

// echo sends one probe datagram from namespace ns to to and waits a second for the echo.
func echo(ns string, to netip.AddrPort) error {
	return network.InNamespace(ns, func() error {
		conn, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(to))
		if err != nil {
			return err
		}
		defer conn.Close()
		msg := []byte{1, 0, 0, 0, 0} // a ping with sequence 0, as the probe sends
		binary.BigEndian.PutUint32(msg[1:], 0)
		if _, err := conn.Write(msg); err != nil {
			return err
		}
		_ = conn.SetReadDeadline(time.Now().Add(time.Second))
		buf := make([]byte, 16)
		n, err := conn.Read(buf)
		if err != nil {
			return err
		}
		if n != 5 || buf[0] != 2 {
			return fmt.Errorf("not an echo: %v", buf[:n])
		}
		return nil
	})
}

// ipIn runs ip in namespace ns: a name under /run/netns or a namespace file.
func ipIn(ns string, args ...string) ([]byte, error) {
	if !filepath.IsAbs(ns) {
		ns = "/run/netns/" + ns
	}
	return exec.Command("nsenter", append([]string{"--net=" + ns, "--", "ip"}, args...)...).Output()
}

func linkMTU(ns, link string) int {
	out, err := ipIn(ns, "-j", "link", "show", link)
	Expect(err).NotTo(HaveOccurred(), "%s in %s", link, ns)
	var l []struct {
		MTU int `json:"mtu"`
	}
	Expect(json.Unmarshal(out, &l)).To(Succeed())
	Expect(l).To(HaveLen(1))
	return l[0].MTU
}

func addresses(w *worker.Worker, link string) []string {
	addrs, err := cluster.Addresses(w, link)
	Expect(err).NotTo(HaveOccurred())
	return addrs
}

func links(w *worker.Worker) []string {
	out, err := ipIn(w.VM.Host.Namespace, "-j", "link", "show")
	Expect(err).NotTo(HaveOccurred())
	var l []struct {
		Name string `json:"ifname"`
	}
	Expect(json.Unmarshal(out, &l)).To(Succeed())
	var names []string
	for _, iface := range l {
		names = append(names, iface.Name)
	}
	return names
}

// vxlanPackets is how many packets flannel.1 on w has received.
func vxlanPackets(w *worker.Worker) int {
	data, err := exec.Command("ip", "-n", w.VM.Host.Namespace, "-j", "-s", "link", "show", "flannel.1").Output()
	Expect(err).NotTo(HaveOccurred())
	var l []struct {
		Stats struct {
			RX struct {
				Packets int `json:"packets"`
			} `json:"rx"`
		} `json:"stats64"`
	}
	Expect(json.Unmarshal(data, &l)).To(Succeed())
	Expect(l).To(HaveLen(1))
	return l[0].Stats.RX.Packets
}
