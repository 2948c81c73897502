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
		tlsConfig, err := members.TLSConfig(cfg.Etcd, time.Now())
		Expect(err).NotTo(HaveOccurred())
		client, err := clientv3.New(clientv3.Config{Endpoints: []string{member.URL}, TLS: tlsConfig, DialTimeout: 5 * time.Second})
		Expect(err).NotTo(HaveOccurred())
		defer client.Close()
		resp, err := client.Get(context.Background(), cfg.Etcd.Prefix+"/subnets/", clientv3.WithPrefix(), clientv3.WithKeysOnly())
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
