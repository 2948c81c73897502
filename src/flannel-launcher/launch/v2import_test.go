package launch_test

import (
	"context"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/config"
	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/members"
	"github.com/flannel-dns/flannel-dns/src/testenv/etcdv2"
	"github.com/flannel-dns/flannel-dns/src/testenv/testlog"
)

// A cluster that is adopting flannel-dns: etcd 3.4 with the v2 API on, where kubo's flanneld keeps its leases.
var _ = Describe("Launcher.Run on etcd 3.4 with kubo's flanneld's data in the v2 store", Ordered, func() {
	const alias = "etcd34.test.internal"
	var member *etcdv2.Member

	BeforeAll(func() {
		var err error
		member, err = etcdv2.Start(env.ca, []string{alias})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(member.Close)
		dnsServer.SetAddresses(alias, member.IP)
	})

	var (
		cfg        config.Config
		recordFile string
		stop       chan os.Signal
	)

	BeforeEach(func() {
		cfg = newConfig()
		cfg.Etcd.Alias, cfg.Etcd.Port = alias, member.Port
		recordFile = filepath.Join(GinkgoT().TempDir(), "record.json")
		stop = make(chan os.Signal, 1)
	})

	v3Leases := func() []string {
		resp, err := v3ClientOf(cfg, member).Get(context.Background(), cfg.Etcd.Prefix+"/subnets/", clientv3.WithPrefix(), clientv3.WithKeysOnly())
		Expect(err).NotTo(HaveOccurred())
		var keys []string
		for _, kv := range resp.Kvs {
			keys = append(keys, string(kv.Key))
		}
		return keys
	}

	It("imports the leases kubo's flanneld holds in v2 before it starts flanneld", func() {
		Expect(member.Put(cfg.Etcd.Prefix+"/config", `{"Network":"198.18.0.0/16","Backend":{"Type":"vxlan"}}`, 0)).To(Succeed())
		Expect(member.Put(cfg.Etcd.Prefix+"/subnets/198.18.7.0-24", `{"PublicIP":"192.0.2.7"}`, 3600)).To(Succeed())
		Expect(member.Put(cfg.Etcd.Prefix+"/subnets/198.18.8.0-24", `{"PublicIP":"192.0.2.8"}`, 3600)).To(Succeed())
		logger, logs := testlog.New()

		runInBackground(newLauncher(cfg, recordFile, logger, new(atomic.Int32)), stop)

		Eventually(recordFile, 10*time.Second).Should(BeAnExistingFile())
		Expect(logs).To(gbytes.Say("Imported 2 leases of kubo's flanneld from the v2 store into v3"))
		Expect(v3Leases()).To(ConsistOf(cfg.Etcd.Prefix+"/subnets/198.18.7.0-24", cfg.Etcd.Prefix+"/subnets/198.18.8.0-24"))
	})

	// etcd out of space (its NOSPACE alarm) answers every read and takes no write: the network config is there,
	// flanneld could start at once, but the leases cannot go into v3 until an operator frees space.
	It("retries while etcd cannot take the leases, and starts flanneld once they are in v3", func() {
		Expect(member.Put(cfg.Etcd.Prefix+"/config", `{"Network":"198.18.0.0/16","Backend":{"Type":"vxlan"}}`, 0)).To(Succeed())
		Expect(member.Put(cfg.Etcd.Prefix+"/subnets/198.18.7.0-24", `{"PublicIP":"192.0.2.7"}`, 3600)).To(Succeed())
		v3 := v3ClientOf(cfg, member)
		_, err := v3.Put(context.Background(), cfg.Etcd.NetworkConfigKey(), string(cfg.Network.Desired()))
		Expect(err).NotTo(HaveOccurred())
		noSpace(v3, pb.AlarmRequest_ACTIVATE)
		DeferCleanup(noSpace, v3, pb.AlarmRequest_DEACTIVATE)
		logger, logs := testlog.New()

		runInBackground(newLauncher(cfg, recordFile, logger, new(atomic.Int32)), stop)

		Eventually(logs, 10*time.Second).Should(gbytes.Say(`reaching etcd failed, retrying: .*Importing the leases of kubo's flanneld ` +
			`from etcd's v2 store before flanneld starts: .*database space exceeded`))
		Consistently(recordFile, time.Second).ShouldNot(BeAnExistingFile(), "flanneld started without the v2 leases")
		noSpace(v3, pb.AlarmRequest_DEACTIVATE)
		Eventually(recordFile, 10*time.Second).Should(BeAnExistingFile())
		Expect(logs).To(gbytes.Say("Imported 1 leases of kubo's flanneld from the v2 store into v3"))
		Expect(v3Leases()).To(ConsistOf(cfg.Etcd.Prefix + "/subnets/198.18.7.0-24"))
	})

	It("starts flanneld with one warning when the v2 store holds no usable network config", func() {
		Expect(member.Put(cfg.Etcd.Prefix+"/config", `garbage`, 0)).To(Succeed())
		Expect(member.Put(cfg.Etcd.Prefix+"/subnets/198.18.7.0-24", `{"PublicIP":"192.0.2.7"}`, 3600)).To(Succeed())
		logger, logs := testlog.New()

		runInBackground(newLauncher(cfg, recordFile, logger, new(atomic.Int32)), stop)

		Eventually(recordFile, 10*time.Second).Should(BeAnExistingFile())
		Expect(logs).To(gbytes.Say(`Not importing the leases of kubo's flanneld from etcd's v2 store; flanneld starts without them: ` +
			`The network config at '.*/config' in the v2 store: is not JSON`))
		Expect(v3Leases()).To(BeEmpty())
	})
})

// v3ClientOf talks to m's v3 API with cfg's TLS setup, as a test's own view of what is stored.
func v3ClientOf(cfg config.Config, m *etcdv2.Member) *clientv3.Client {
	tlsConfig, err := members.TLSConfig(cfg.Etcd, time.Now())
	Expect(err).NotTo(HaveOccurred())
	client, err := clientv3.New(clientv3.Config{Endpoints: []string{m.URL}, TLS: tlsConfig, DialTimeout: 5 * time.Second})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(client.Close)
	return client
}

// noSpace raises or clears the NOSPACE alarm of the member v3 talks to, as etcd raises it when its database
// reaches its quota and an operator clears it.
func noSpace(v3 *clientv3.Client, action pb.AlarmRequest_AlarmAction) {
	status, err := v3.Status(context.Background(), v3.Endpoints()[0])
	Expect(err).NotTo(HaveOccurred())
	_, err = pb.NewMaintenanceClient(v3.ActiveConnection()).Alarm(context.Background(),
		&pb.AlarmRequest{Action: action, MemberID: status.Header.MemberId, Alarm: pb.AlarmType_NOSPACE})
	Expect(err).NotTo(HaveOccurred())
}
