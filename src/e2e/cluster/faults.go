package cluster

// What the fault suite (src/e2e/faults) does to a running cluster: find the member that carries a worker's
// flanneld watch, black-hole or kill it, start a worker during the fault and time the failover, reboot a
// worker, and probe among the untouched workers' pods only.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/netip"
	"os/exec"
	"strconv"
	"strings"
	"time"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"

	"github.com/flannel-dns/flannel-dns/src/e2e/master"
	"github.com/flannel-dns/flannel-dns/src/e2e/worker"
)

// leasePrefix is where flannel keeps its subnet leases (the job's default etcd.prefix).
const leasePrefix = "/coreos.com/network/subnets/"

// LeaseKey is the etcd key of the lease that FLANNEL_SUBNET (198.18.7.1/24) comes from.
func LeaseKey(flannelSubnet string) (string, error) {
	subnet, err := netip.ParsePrefix(flannelSubnet)
	if err != nil {
		return "", bosherr.WrapErrorf(err, "FLANNEL_SUBNET '%s'", flannelSubnet)
	}
	subnet = subnet.Masked()
	return fmt.Sprintf("%s%s-%d", leasePrefix, subnet.Addr(), subnet.Bits()), nil
}

// Subnet is w's FLANNEL_SUBNET, "" when subnet.env has none.
func Subnet(w *worker.Worker) string {
	env, err := w.SubnetEnv(SubnetFile)
	if err != nil {
		return ""
	}
	return env["FLANNEL_SUBNET"]
}

// markerKey is a lease that no worker holds, written and deleted to find a watch; flannel hands out
// subnets at random, so the key is checked to be free first. Its attributes point at an address no VM has.
const (
	markerKey    = leasePrefix + "198.19.255.0-24"
	markerSubnet = "198.19.255.0/24"
	markerValue  = `{"PublicIP":"192.0.2.250","BackendType":"vxlan","BackendData":{"VNI":1,"VtepMAC":"02:00:c0:00:02:fa"}}`
)

// WatchCarrier is the master whose connection carries flanneld's lease watch on w. flanneld keeps one
// connection per etcd endpoint and its watch stream runs on one of them. A marker lease is written, then
// deleted: the delete event reaches flanneld on the watch's connection and makes it send nothing (it only
// removes the marker's route), so that connection is the one whose received bytes grow, alone. The write
// before it makes every flanneld look up the marker's TTL, on any connection, so the count starts after.
func (c *Cluster) WatchCarrier(w *worker.Worker) (*master.Member, error) {
	return c.WatchCarrierOf(w, w.FlanneldPID())
}

// WatchCarrierOf is WatchCarrier for the flanneld with process id pid on w (one not started by the launcher).
func (c *Cluster) WatchCarrierOf(w *worker.Worker, pid int) (*master.Member, error) {
	if pid == 0 {
		return nil, bosherr.Errorf("No flanneld on %s", w.Name)
	}
	for attempt := 1; attempt <= 5; attempt++ {
		peer, err := c.carrierOnce(w, pid)
		if err != nil {
			return nil, err
		}
		for _, m := range c.masters {
			if peer.IsValid() && m.Address == peer {
				c.Logf("%s: flanneld's watch is on %s (%s)", w.Name, m.Name, peer)
				return m, nil
			}
		}
		c.Logf("%s: no single connection received the delete event (attempt %d), trying again", w.Name, attempt)
	}
	return nil, bosherr.Errorf("Could not tell which member carries flanneld's watch on %s", w.Name)
}

// carrierOnce writes and deletes the marker lease and returns the peer of the one connection that received
// bytes from the delete, or the zero address when none or several did.
func (c *Cluster) carrierOnce(w *worker.Worker, pid int) (netip.Addr, error) {
	etcd := c.AnyMaster()
	if out, err := etcd.Etcdctl("get", markerKey, "--keys-only"); err != nil || strings.TrimSpace(out) != "" {
		return netip.Addr{}, bosherr.Errorf("Marker lease %s is taken or unreadable: %v '%s'", markerKey, err, strings.TrimSpace(out))
	}
	revoke, err := putMarker(etcd)
	if err != nil {
		return netip.Addr{}, err
	}
	defer revoke()
	time.Sleep(time.Second) // every flanneld handles the write
	before, err := etcdConns(w, pid)
	if err != nil {
		return netip.Addr{}, err
	}
	if _, err := etcd.Etcdctl("del", markerKey); err != nil {
		return netip.Addr{}, err
	}
	time.Sleep(time.Second)
	after, err := etcdConns(w, pid)
	if err != nil {
		return netip.Addr{}, err
	}
	var grown []string
	var peer netip.Addr
	for local, conn := range after {
		if n := conn.received - before[local].received; n > 0 {
			grown = append(grown, fmt.Sprintf("%s +%d", conn.peer, n))
			peer = conn.peer.Addr().Unmap()
		}
	}
	c.Logf("%s: connections that received the delete: %v", w.Name, grown)
	if len(grown) != 1 {
		return netip.Addr{}, nil
	}
	return peer, nil
}

type etcdConn struct {
	peer     netip.AddrPort
	received uint64
}

// etcdConns lists pid's established connections to the etcd port on w by local address, with the bytes
// each has received (ss -i).
func etcdConns(w *worker.Worker, pid int) (map[string]etcdConn, error) {
	out, err := exec.Command("ip", "netns", "exec", w.Namespace, "ss", "-tinpH", "state", "established", "dport", "=", ":2379").Output()
	if err != nil {
		return nil, bosherr.WrapErrorf(err, "Listing connections on %s", w.Name)
	}
	owner := fmt.Sprintf("pid=%d,", pid)
	conns := map[string]etcdConn{}
	var local string
	scanner := bufio.NewScanner(strings.NewReader(string(out)))
	for scanner.Scan() {
		line := scanner.Text()
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if !strings.HasPrefix(line, " ") && !strings.HasPrefix(line, "\t") {
			local = ""
			if len(fields) >= 5 && strings.Contains(line, owner) {
				peer, err := netip.ParseAddrPort(fields[3])
				if err != nil {
					return nil, bosherr.WrapErrorf(err, "Parsing ss line '%s'", line)
				}
				local = fields[2]
				conns[local] = etcdConn{peer: peer}
			}
			continue
		}
		if local == "" {
			continue
		}
		for _, f := range fields {
			if n, ok := strings.CutPrefix(f, "bytes_received:"); ok {
				received, _ := strconv.ParseUint(n, 10, 64)
				conns[local] = etcdConn{peer: conns[local].peer, received: received}
			}
		}
	}
	return conns, scanner.Err()
}

// BlackHole cuts m's VM off the network as a dead VM or a pulled cable would: its port on the switch goes
// down, so nothing it sends arrives and nothing sent to it is answered, not even with a reset. The DNS
// records stay as they are (bosh-dns would go on answering with the dead member).
func (c *Cluster) BlackHole(m *master.Member) error { return c.setPort(m, "down") }

// Reconnect brings m's switch port up again.
func (c *Cluster) Reconnect(m *master.Member) error { return c.setPort(m, "up") }

// noICMPTable is the switch's nftables table of DropICMP.
const noICMPTable = "fde-no-icmp"

// DropICMP drops every ICMP packet between the VMs, as an IaaS security group that allows no ICMP does: on the
// switch's bridge, so TCP, UDP (flannel's VXLAN, with the pods' own ICMP inside) and ARP pass.
func (c *Cluster) DropICMP() error {
	c.Logf("dropping ICMP between the VMs")
	return c.switchNft(fmt.Sprintf("add table bridge %[1]s; add chain bridge %[1]s forward { type filter hook forward priority 0; }; "+
		"add rule bridge %[1]s forward ether type ip ip protocol icmp drop", noICMPTable))
}

// AllowICMP removes what DropICMP added.
func (c *Cluster) AllowICMP() error {
	c.Logf("letting ICMP through between the VMs again")
	return c.switchNft("delete table bridge " + noICMPTable)
}

func (c *Cluster) switchNft(rules string) error {
	if out, err := exec.Command("ip", "netns", "exec", c.net.SwitchNamespace(), "nft", rules).CombinedOutput(); err != nil {
		return bosherr.WrapErrorf(err, "nft on the switch: %s: %s", rules, strings.TrimSpace(string(out)))
	}
	return nil
}

// setPort finds the bridge port of m's eth0 (the veth peer, by interface index) and sets it up or down.
func (c *Cluster) setPort(m *master.Member, state string) error {
	var nic []struct {
		Peer int `json:"link_index"`
	}
	if err := ipJSON(&nic, "-n", m.Namespace, "link", "show", "eth0"); err != nil || len(nic) != 1 {
		return bosherr.Errorf("Reading eth0 of %s: %v", m.Name, err)
	}
	var ports []struct {
		Index int    `json:"ifindex"`
		Name  string `json:"ifname"`
	}
	sw := c.net.SwitchNamespace()
	if err := ipJSON(&ports, "-n", sw, "link", "show"); err != nil {
		return err
	}
	for _, p := range ports {
		if p.Index == nic[0].Peer {
			c.Logf("%s: switch port %s %s", m.Name, p.Name, state)
			if out, err := exec.Command("ip", "-n", sw, "link", "set", p.Name, state).CombinedOutput(); err != nil {
				return bosherr.WrapErrorf(err, "Setting port %s of %s %s: %s", p.Name, m.Name, state, strings.TrimSpace(string(out)))
			}
			return nil
		}
	}
	return bosherr.Errorf("No switch port with index %d for %s", nic[0].Peer, m.Name)
}

func ipJSON(v any, args ...string) error {
	out, err := exec.Command("ip", append([]string{"-j"}, args...)...).Output()
	if err != nil {
		return bosherr.WrapErrorf(err, "ip -j %s", strings.Join(args, " "))
	}
	return json.Unmarshal(out, v)
}

// RestartMember starts etcd on m again (same data directory, existing cluster) and waits until it is healthy.
func (c *Cluster) RestartMember(m *master.Member) error {
	c.Logf("%s: starting etcd again", m.Name)
	if err := m.Resume(); err != nil {
		return err
	}
	return m.WaitHealthy(startTimeout)
}

// PrepareWorker does the director's part of adding a worker (VM, DNS records, jobs rendered and laid out)
// without starting anything on it, so that a fault can come between it and StartDuring.
func (c *Cluster) PrepareWorker() (*worker.Worker, error) {
	w, err := c.createWorker(c.freeWorkerIndex())
	if err != nil {
		return nil, err
	}
	if _, err := c.replan(); err != nil {
		return nil, err
	}
	rendered, _ := c.plan.Of(instanceName("worker", w.Index))
	return w, w.Agent.Apply(rendered.Jobs)
}

// startWorker rolls the last plan (which creates w) and puts pods on w.
func (c *Cluster) startWorker(w *worker.Worker) error {
	if err := c.roll(c.plan); err != nil {
		return err
	}
	return c.addPods(w)
}

// Failover is what starting a worker during a fault took, each from the fault.
type Failover struct {
	Dropped time.Duration // the observer's flanneld had no connection left to the faulted member
	Leased  time.Duration // the newcomer's lease appeared in etcd
	Routed  time.Duration // the observer routed the newcomer's subnet through flannel.1
}

// StartDuring starts newcomer (from PrepareWorker) right after a fault of faulted at since, and times, from
// since, when observer's flanneld has dropped its connections to faulted, when the newcomer's lease appears
// in etcd (read through a member the fault spares) and when observer routes it through flannel.1. It gives
// up on each after bound, then waits until every worker routes the newcomer.
func (c *Cluster) StartDuring(newcomer *worker.Worker, since time.Time, observer *worker.Worker, faulted *master.Member, bound time.Duration) (Failover, error) {
	f, err := c.TimeStart(newcomer, since, observer, observer.FlanneldPID(), faulted, bound)
	switch {
	case err != nil:
		return f, err
	case f.Leased == 0:
		return f, bosherr.Errorf("Within %s etcd got no lease for %s", bound, newcomer.Name)
	case f.Routed == 0:
		return f, bosherr.Errorf("Within %s %s did not route %s's subnet", bound, observer.Name, newcomer.Name)
	case f.Dropped == 0:
		return f, bosherr.Errorf("Within %s flanneld on %s did not drop its connections to %s", bound, observer.Name, faulted.Name)
	}
	return f, c.waitForRoutes(newcomer)
}

// TimeStart is StartDuring's measurement, for the flanneld with process id pid on observer: a time that
// did not come within bound is zero. It does not wait for the other workers' routes.
func (c *Cluster) TimeStart(newcomer *worker.Worker, since time.Time, observer *worker.Worker, pid int, faulted *master.Member, bound time.Duration) (Failover, error) {
	deadline := since.Add(bound)
	reader := c.spared(faulted)
	routes, err := firstNew(deadline, func() (map[string]bool, error) { return flannelRoutes(observer) })
	if err != nil {
		return Failover{}, err
	}
	leases, err := firstNew(deadline, func() (map[string]bool, error) { return leaseKeys(reader) })
	if err != nil {
		return Failover{}, err
	}
	dropped := droppedFrom(deadline, observer, pid, faulted)
	if err := c.startWorker(newcomer); err != nil {
		return Failover{}, err
	}
	route, lease, drop := <-routes, <-leases, <-dropped
	subnet, err := netip.ParsePrefix(Subnet(newcomer))
	if err != nil {
		return Failover{}, bosherr.WrapErrorf(err, "Subnet of %s", newcomer.Name)
	}
	key, _ := LeaseKey(subnet.String())
	switch {
	case lease.value != "" && lease.value != key:
		return Failover{}, bosherr.Errorf("Within %s etcd got lease '%s', but %s has %s", bound, lease.value, newcomer.Name, key)
	case route.value != "" && route.value != subnet.Masked().String():
		return Failover{}, bosherr.Errorf("Within %s %s routed '%s', but %s has %s", bound, observer.Name, route.value, newcomer.Name, subnet.Masked())
	}
	return Failover{Dropped: drop.since(since), Leased: lease.since(since), Routed: route.since(since)}, nil
}

// spared is a master other than faulted.
func (c *Cluster) spared(faulted *master.Member) *master.Member {
	for _, m := range c.Members() {
		if m != faulted {
			return m
		}
	}
	return nil
}

type sighting struct {
	value string
	at    time.Time
}

// since is how long after t the sighting came, zero when it did not.
func (s sighting) since(t time.Time) time.Duration {
	if s.value == "" {
		return 0
	}
	return s.at.Sub(t)
}

// await polls check every 100 ms until it reports a value, or until deadline (then it yields the zero
// sighting). The time is taken when the answer is in: an upper bound.
func await(deadline time.Time, check func() (string, bool)) <-chan sighting {
	found := make(chan sighting, 1)
	go func() {
		for time.Now().Before(deadline) {
			if v, ok := check(); ok {
				found <- sighting{value: v, at: time.Now()}
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		found <- sighting{}
	}()
	return found
}

// firstNew awaits a value in list that its first answer did not hold. The first answer is asked for until
// deadline: right after a fault, a member may not answer for a moment.
func firstNew(deadline time.Time, list func() (map[string]bool, error)) (<-chan sighting, error) {
	known, err := list()
	for err != nil && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		known, err = list()
	}
	if err != nil {
		return nil, err
	}
	return await(deadline, func() (string, bool) {
		now, _ := list()
		for v := range now {
			if !known[v] {
				return v, true
			}
		}
		return "", false
	}), nil
}

// leaseKeys is the set of lease keys in etcd as m holds them: a serializable read, which m answers without
// a leader (the fault may have taken the leader away; flanneld's watch sees the lease as m does).
func leaseKeys(m *master.Member) (map[string]bool, error) {
	out, err := m.Etcdctl("get", "--prefix", "--keys-only", "--consistency=s", leasePrefix)
	if err != nil {
		return nil, err
	}
	keys := map[string]bool{}
	for _, k := range strings.Fields(out) {
		keys[k] = true
	}
	return keys, nil
}

// flannelRoutes is the set of destinations that w routes through flannel.1.
func flannelRoutes(w *worker.Worker) (map[string]bool, error) {
	var routes []struct {
		Dst string `json:"dst"`
	}
	if err := ipJSON(&routes, "-n", w.Namespace, "route", "show", "dev", "flannel.1"); err != nil {
		return nil, err
	}
	set := map[string]bool{}
	for _, r := range routes {
		set[r.Dst] = true
	}
	return set, nil
}

// Routes reports whether w routes subnet (a FLANNEL_SUBNET) through flannel.1.
func Routes(w *worker.Worker, flannelSubnet string) bool {
	subnet, err := netip.ParsePrefix(flannelSubnet)
	if err != nil {
		return false
	}
	routes, err := flannelRoutes(w)
	return err == nil && routes[subnet.Masked().String()]
}

// TimeLease times, for the flanneld with process id pid on observer, a lease written into etcd (through a member
// the fault spares) right after a fault of faulted at since, as a new worker's flanneld writes its own: when
// observer's flanneld has dropped its connections to faulted, and when it routes the lease's subnet through
// flannel.1. A new VM takes seconds to write its lease; this one is in etcd at once, so the route times observer's
// failover alone. The lease is the watch marker's, revoked before it returns; a time that did not come within bound
// is zero.
func (c *Cluster) TimeLease(since time.Time, observer *worker.Worker, pid int, faulted *master.Member, bound time.Duration) (Failover, error) {
	if Routes(observer, markerSubnet) {
		return Failover{}, bosherr.Errorf("%s routes the marker's subnet %s before it is written", observer.Name, markerSubnet)
	}
	deadline := since.Add(bound)
	dropped := droppedFrom(deadline, observer, pid, faulted)
	revoke, err := putMarker(c.spared(faulted))
	if err != nil {
		<-dropped
		return Failover{}, err
	}
	defer revoke()
	leased := time.Since(since)
	routed := await(deadline, func() (string, bool) { return markerSubnet, Routes(observer, markerSubnet) })
	route, drop := <-routed, <-dropped
	return Failover{Dropped: drop.since(since), Leased: leased, Routed: route.since(since)}, nil
}

// putMarker writes the marker lease through etcd, with an etcd lease of its own so that flanneld's TTL look-up
// succeeds (it also ends a marker left behind); revoke takes it away. Each request may take a second, and the whole
// is tried again for up to 30 s: a fault or a reconnect just before may have the members electing a leader, and a
// request forwarded to a black-holed leader would otherwise hang for etcdctl's whole timeout.
func putMarker(etcd *master.Member) (revoke func(), err error) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		revoke, err = putMarkerOnce(etcd)
		if err == nil || time.Now().After(deadline) {
			return revoke, err
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func putMarkerOnce(etcd *master.Member) (revoke func(), err error) {
	const timeout = "--command-timeout=1s" // the last of etcdctl's flags counts
	granted, err := etcd.Etcdctl("lease", "grant", "60", timeout)
	fields := strings.Fields(granted) // lease 694d9a1c0d2e8f0a granted with TTL(60s)
	if err != nil || len(fields) < 2 {
		return nil, bosherr.Errorf("Granting the marker's etcd lease: %v '%s'", err, granted)
	}
	revoke = func() { _, _ = etcd.Etcdctl("lease", "revoke", fields[1]) }
	if _, err := etcd.Etcdctl("put", markerKey, markerValue, "--lease="+fields[1], timeout); err != nil {
		revoke()
		return nil, err
	}
	return revoke, nil
}

// droppedFrom awaits the moment when the flanneld with process id pid on observer, or the one that replaced it,
// has no connection left to faulted.
func droppedFrom(deadline time.Time, observer *worker.Worker, pid int, faulted *master.Member) <-chan sighting {
	return await(deadline, func() (string, bool) {
		conns, err := etcdConns(observer, pid)
		if now := observer.FlanneldPID(); err != nil && now != 0 && now != pid {
			pid = now // restarted without the member (a kernel without SOCK_DESTROY): the new one's count
			conns, err = etcdConns(observer, pid)
		}
		for _, conn := range conns {
			if conn.peer.Addr().Unmap() == faulted.Address {
				return "", false
			}
		}
		return faulted.Name, err == nil
	})
}
