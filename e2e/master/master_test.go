package master_test

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/flannel-dns/flannel-dns/e2e/dnsmasq"
	"github.com/flannel-dns/flannel-dns/e2e/master"
	"github.com/flannel-dns/flannel-dns/e2e/network"
	"github.com/flannel-dns/flannel-dns/e2e/vm"
	"github.com/flannel-dns/flannel-dns/testenv/pki"
)

// Members join with member add and leave with member remove, each reached through its per-member name.
var _ = Describe("etcd members on master VMs", func() {
	var (
		net     *network.Network
		dns     *dnsmasq.Server
		ca      *pki.CA
		client  pki.Pair
		members []*master.Member
		work    string
	)

	BeforeEach(func() {
		etcdBin := os.Getenv("E2E_ETCD_BIN")
		if etcdBin == "" {
			Expect(os.Getenv("E2E_REQUIRED")).To(BeEmpty(), "E2E_ETCD_BIN must be set")
			Skip("E2E_ETCD_BIN (the directory with etcd and etcdctl) is not set")
		}
		work = GinkgoT().TempDir()
		var err error
		net, err = network.New(network.Prefix()+"-mt", netip.MustParsePrefix("192.0.2.1/24"))
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { Expect(net.Destroy()).To(Succeed()) })
		dns, err = dnsmasq.Start(net.SwitchNamespace(), "192.0.2.1", work, []string{"internal"})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(dns.Stop)
		ca, err = pki.NewCA(work, "ca")
		Expect(err).NotTo(HaveOccurred())
		client, err = ca.Issue(pki.Client("test"))
		Expect(err).NotTo(HaveOccurred())
		members = nil
		for i := 0; i < 4; i++ {
			host, err := net.AddHost(fmt.Sprintf("m%d", i), netip.MustParseAddr(fmt.Sprintf("192.0.2.%d", 10+i)))
			Expect(err).NotTo(HaveOccurred())
			v, err := vm.New(host, filepath.Join(work, host.Name), "192.0.2.1")
			Expect(err).NotTo(HaveOccurred())
			m := &master.Member{VM: v, Index: i, Domain: "cfcr.internal"}
			Expect(m.Install(ca, client, etcdBin)).To(Succeed())
			DeferCleanup(func() { m.StopAll(5 * time.Second) })
			members = append(members, m)
		}
		records := dnsmasq.Records{}
		for _, m := range members {
			records[m.Host()] = []string{m.Address.String()}
		}
		Expect(dns.Set(records)).To(Succeed())
	})

	It("forms a cluster, takes a new member and lets a drained one go", func() {
		initial := members[:3]
		for _, m := range initial {
			Expect(m.Start(initial, "new")).To(Succeed())
		}
		for _, m := range initial {
			Expect(m.WaitHealthy(time.Minute)).To(Succeed(), m.MemberName())
		}

		if err := members[0].Add(members[3]); err != nil {
			Fail(err.Error())
		}
		Expect(members[3].Start(members, "existing")).To(Succeed())
		Expect(members[3].WaitHealthy(time.Minute)).To(Succeed())
		list, err := members[0].Etcdctl("member", "list")
		Expect(err).NotTo(HaveOccurred())
		Expect(strings.Count(list, "started")).To(Equal(4))

		Expect(members[1].Drain(members[0])).To(Succeed())
		list, err = members[0].Etcdctl("member", "list")
		Expect(err).NotTo(HaveOccurred())
		Expect(list).NotTo(ContainSubstring("master-1"))
		Expect(list).To(ContainSubstring("https://master-3.etcd.cfcr.internal:2379"))
	})
})
