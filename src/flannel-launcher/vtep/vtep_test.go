package vtep_test

import (
	"context"
	"net"
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/vishvananda/netlink"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/config"
	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/members"
	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/vtep"
	"github.com/flannel-dns/flannel-dns/src/testenv/etcdcluster"
	"github.com/flannel-dns/flannel-dns/src/testenv/pki"
)

var vxlan = config.Network{CIDR: "198.18.0.0/15", SubnetLen: 24, BackendType: "vxlan"}

var _ = Describe("Local", func() {
	var ns string
	BeforeEach(func() { ns = nodeNamespace() })

	It("finds the default route's interface and its address, as flanneld does", func() {
		inNamespace(ns, func() {
			node, err := vtep.Local(config.Flanneld{})
			Expect(err).NotTo(HaveOccurred())
			Expect(node.Link.Attrs().Name).To(Equal("eth0"))
			Expect(node.Addr.String()).To(Equal("192.0.2.10"))
			Expect(node.PublicIP.String()).To(Equal("192.0.2.10"))
		})
	})

	It("takes flanneld.iface by name or by address, and flanneld.public_ip for the lease", func() {
		run("ip", "-n", ns, "address", "add", "198.51.100.10/24", "dev", "peer0")
		inNamespace(ns, func() {
			node, err := vtep.Local(config.Flanneld{Iface: "peer0", PublicIP: "203.0.113.10"})
			Expect(err).NotTo(HaveOccurred())
			Expect(node.Link.Attrs().Name).To(Equal("peer0"))
			Expect(node.Addr.String()).To(Equal("198.51.100.10"))
			Expect(node.PublicIP.String()).To(Equal("203.0.113.10"))

			node, err = vtep.Local(config.Flanneld{Iface: "198.51.100.10"})
			Expect(err).NotTo(HaveOccurred())
			Expect(node.Link.Attrs().Name).To(Equal("peer0"))
		})
	})

	It("takes the address flanneld.iface names, not the first one of its interface", func() {
		run("ip", "-n", ns, "address", "add", "192.0.2.11/24", "dev", "eth0")
		inNamespace(ns, func() {
			node, err := vtep.Local(config.Flanneld{Iface: "192.0.2.11"})
			Expect(err).NotTo(HaveOccurred())
			Expect(node.Link.Attrs().Name).To(Equal("eth0"))
			Expect(node.Addr.String()).To(Equal("192.0.2.11"))
			Expect(node.PublicIP.String()).To(Equal("192.0.2.11"))
		})
	})

	It("takes the interface that has flanneld.public_ip when flanneld.iface is not set, and that address", func() {
		run("ip", "-n", ns, "address", "add", "198.51.100.9/24", "dev", "peer0")
		run("ip", "-n", ns, "address", "add", "198.51.100.10/24", "dev", "peer0")
		inNamespace(ns, func() {
			node, err := vtep.Local(config.Flanneld{PublicIP: "198.51.100.10"})
			Expect(err).NotTo(HaveOccurred())
			Expect(node.Link.Attrs().Name).To(Equal("peer0"))
			Expect(node.Addr.String()).To(Equal("198.51.100.10"))
			Expect(node.PublicIP.String()).To(Equal("198.51.100.10"))

			_, err = vtep.Local(config.Flanneld{PublicIP: "203.0.113.10"})
			Expect(err).To(MatchError(ContainSubstring("No interface has the address 203.0.113.10 (flanneld.public_ip, with flanneld.iface not set)")))
		})
	})

	It("prefers a global address to a link-local one, a permanent one to one with a lifetime, and skips a deprecated one", func() {
		run("ip", "-n", ns, "address", "add", "169.254.7.7/16", "dev", "peer0")
		run("ip", "-n", ns, "address", "add", "198.51.100.20/24", "dev", "peer0", "valid_lft", "600", "preferred_lft", "600")
		run("ip", "-n", ns, "address", "add", "198.51.100.30/24", "dev", "peer0", "preferred_lft", "0")
		run("ip", "-n", ns, "address", "add", "198.51.100.10/24", "dev", "peer0")
		source := func() string {
			var addr string
			inNamespace(ns, func() {
				node, err := vtep.Local(config.Flanneld{Iface: "peer0"})
				Expect(err).NotTo(HaveOccurred())
				addr = node.Addr.String()
			})
			return addr
		}
		Expect(source()).To(Equal("198.51.100.10"))
		run("ip", "-n", ns, "address", "del", "198.51.100.10/24", "dev", "peer0")
		Expect(source()).To(Equal("198.51.100.20"))
		run("ip", "-n", ns, "address", "del", "198.51.100.20/24", "dev", "peer0")
		Expect(source()).To(Equal("169.254.7.7"), "a link-local address when there is nothing else")
	})

	It("fails, naming the interface, when it has only addresses flanneld would not use", func() {
		run("ip", "-n", ns, "address", "add", "198.51.100.30/24", "dev", "peer0", "preferred_lft", "0")
		inNamespace(ns, func() {
			_, err := vtep.Local(config.Flanneld{Iface: "peer0"})
			Expect(err).To(MatchError(ContainSubstring("Interface 'peer0' has no IPv4 address flanneld would use")))
		})
	})

	It("fails, saying why, without a default route or with an unknown interface", func() {
		run("ip", "-n", ns, "route", "del", "default")
		inNamespace(ns, func() {
			_, err := vtep.Local(config.Flanneld{})
			Expect(err).To(MatchError(ContainSubstring("No default route, and flanneld.iface is not set")))
			_, err = vtep.Local(config.Flanneld{Iface: "eth9"})
			Expect(err).To(MatchError(ContainSubstring("Finding interface 'eth9'")))
		})
	})
})

var _ = Describe("Ensure", func() {
	var ns string
	mac, _ := net.ParseMAC("02:00:c0:00:02:0a")
	BeforeEach(func() { ns = nodeNamespace() })

	It("creates flannel.1 with the MAC, as flanneld would: VNI 1, eth0's address and index, no learning, MTU 50 less, down", func() {
		inNamespace(ns, func() {
			node, err := vtep.Local(config.Flanneld{})
			Expect(err).NotTo(HaveOccurred())

			Expect(vtep.Ensure(node, vxlan, mac)).To(BeTrue())

			link, err := netlink.LinkByName("flannel.1")
			Expect(err).NotTo(HaveOccurred())
			device := link.(*netlink.Vxlan)
			Expect(device.HardwareAddr).To(Equal(mac))
			Expect(device.VxlanId).To(Equal(1))
			Expect(device.SrcAddr.String()).To(Equal("192.0.2.10"))
			Expect(device.VtepDevIndex).To(Equal(node.Link.Attrs().Index))
			Expect(device.Port).To(Equal(8472))
			Expect(device.Learning).To(BeFalse())
			Expect(device.MTU).To(Equal(1450))
			Expect(device.Flags & net.FlagUp).To(BeZero())
		})
	})

	It("takes the VNI and port from the network config", func() {
		inNamespace(ns, func() {
			node, err := vtep.Local(config.Flanneld{})
			Expect(err).NotTo(HaveOccurred())
			network := vxlan
			network.VNI, network.Port = 4, 4789

			Expect(vtep.Ensure(node, network, mac)).To(BeTrue())

			link, err := netlink.LinkByName("flannel.4")
			Expect(err).NotTo(HaveOccurred())
			Expect(link.(*netlink.Vxlan).VxlanId).To(Equal(4))
			Expect(link.(*netlink.Vxlan).Port).To(Equal(4789))
		})
	})

	It("leaves a device that exists alone, whatever its MAC", func() {
		run("ip", "-n", ns, "link", "add", "flannel.1", "address", "02:00:c0:00:02:99", "type", "vxlan", "id", "1", "dstport", "8472", "dev", "eth0")
		inNamespace(ns, func() {
			node, err := vtep.Local(config.Flanneld{})
			Expect(err).NotTo(HaveOccurred())

			Expect(vtep.Ensure(node, vxlan, mac)).To(BeFalse())

			link, err := netlink.LinkByName("flannel.1")
			Expect(err).NotTo(HaveOccurred())
			Expect(link.Attrs().HardwareAddr.String()).To(Equal("02:00:c0:00:02:99"))
		})
	})
})

var _ = Describe("Missing", func() {
	var ns string
	BeforeEach(func() { ns = nodeNamespace() })

	It("is true until flannel.<VNI> exists, and false after", func() {
		network := vxlan
		network.VNI = 3
		inNamespace(ns, func() { Expect(vtep.Missing(network)).To(BeTrue()) })
		run("ip", "-n", ns, "link", "add", "flannel.3", "type", "vxlan", "id", "3", "dstport", "8472", "dev", "eth0")
		inNamespace(ns, func() {
			Expect(vtep.Missing(network)).To(BeFalse())
			Expect(vtep.Missing(vxlan)).To(BeTrue(), "flannel.1 is another VNI's device")
		})
	})
})

var _ = Describe("LeaseMAC", Ordered, func() {
	var (
		kv     *clientv3.Client
		prefix = "/vtep-test/network"
		node   = vtep.Node{PublicIP: net.ParseIP("192.0.2.10")}
	)

	BeforeAll(func() { kv, _ = clusterOf(1) })

	put := func(subnet, value string) {
		_, err := kv.Put(context.Background(), prefix+"/subnets/"+subnet, value)
		Expect(err).NotTo(HaveOccurred())
	}

	It("is nil when no vxlan lease names the node's address", func() {
		put("198.18.1.0-24", `{"PublicIP":"192.0.2.11","BackendType":"vxlan","BackendData":{"VtepMAC":"02:00:c0:00:02:0b"}}`)
		put("198.18.2.0-24", `{"PublicIP":"192.0.2.10","BackendType":"host-gw"}`)
		put("198.18.3.0-24", `garbage`)

		mac, key, err := vtep.LeaseMAC(context.Background(), kv, prefix, node)

		Expect(err).NotTo(HaveOccurred())
		Expect(mac).To(BeNil())
		Expect(key).To(BeEmpty())
	})

	It("is the VtepMAC of the first vxlan lease that names the node's address, as kubo's flanneld wrote it", func() {
		put("198.18.9.0-24", `{"PublicIP":"192.0.2.10","BackendType":"vxlan","BackendData":{"VtepMAC":"02:00:c0:00:02:0a"}}`)

		mac, key, err := vtep.LeaseMAC(context.Background(), kv, prefix, node)

		Expect(err).NotTo(HaveOccurred())
		Expect(mac.String()).To(Equal("02:00:c0:00:02:0a"))
		Expect(key).To(Equal(prefix + "/subnets/198.18.9.0-24"))
	})

	It("fails, naming the lease, when that lease names no MAC", func() {
		put("198.18.4.0-24", `{"PublicIP":"192.0.2.10","BackendType":"vxlan","BackendData":{}}`)

		_, _, err := vtep.LeaseMAC(context.Background(), kv, prefix, node)

		Expect(err).To(MatchError(ContainSubstring("The lease at '%s/subnets/198.18.4.0-24' names no VtepMAC", prefix)))
	})
})

// A recreated VM starts while its cluster has no leader (an election) or no quorum (members down): the member it
// asks answers the lease read from what it holds, as it answers the network config's.
var _ = Describe("LeaseMAC with the quorum lost", Ordered, func() {
	var (
		kv     *clientv3.Client
		prefix = "/vtep-quorum/network"
		node   = vtep.Node{PublicIP: net.ParseIP("192.0.2.10")}
	)

	BeforeAll(func() {
		var three *etcdcluster.Cluster
		kv, three = clusterOf(3)
		_, err := kv.Put(context.Background(), prefix+"/subnets/198.18.9.0-24",
			`{"PublicIP":"192.0.2.10","BackendType":"vxlan","BackendData":{"VtepMAC":"02:00:c0:00:02:0a"}}`)
		Expect(err).NotTo(HaveOccurred())
		// member 0 has applied the put before quorum goes: a serializable read there returns it
		Eventually(func() (int64, error) {
			resp, err := kv.Get(context.Background(), prefix+"/subnets/", clientv3.WithPrefix(), clientv3.WithSerializable())
			if err != nil {
				return 0, err
			}
			return resp.Count, nil
		}).Should(Equal(int64(1)))
		three.Stop(1)
		three.Stop(2)
	})

	It("finds the lease's MAC within the launcher's bound on a pass of etcd requests", func() {
		ctx, cancel := context.WithTimeout(context.Background(), members.RequestTimeout)
		defer cancel()

		mac, key, err := vtep.LeaseMAC(ctx, kv, prefix, node)

		Expect(err).NotTo(HaveOccurred())
		Expect(mac.String()).To(Equal("02:00:c0:00:02:0a"))
		Expect(key).To(Equal(prefix + "/subnets/198.18.9.0-24"))
	})
})

// clusterOf starts a cluster of size members with mutual TLS and returns a client of its first member, the one
// that stays when a spec stops the others.
func clusterOf(size int) (*clientv3.Client, *etcdcluster.Cluster) {
	ca, err := pki.NewCA(GinkgoT().TempDir(), "etcd-ca")
	Expect(err).NotTo(HaveOccurred())
	client, err := ca.Issue(pki.Client("flanneld"))
	Expect(err).NotTo(HaveOccurred())
	cluster, err := etcdcluster.Start(ca, etcdcluster.Options{Size: size, Domain: "etcd.test.internal"})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(cluster.Close)
	tlsConfig, err := members.TLSConfig(config.Etcd{CAFile: ca.CertFile, CertFile: client.CertFile, KeyFile: client.KeyFile}, time.Now())
	Expect(err).NotTo(HaveOccurred())
	endpoint := "https://" + net.JoinHostPort(cluster.Members[0].IP.String(), strconv.Itoa(cluster.Port))
	kv, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, TLS: tlsConfig, DialTimeout: 10 * time.Second})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(kv.Close)
	return kv, cluster
}
