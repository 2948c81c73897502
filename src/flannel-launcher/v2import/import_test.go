package v2import_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/config"
	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/v2import"
	"github.com/flannel-dns/flannel-dns/src/testenv/etcdv2"
	"github.com/flannel-dns/flannel-dns/src/testenv/testlog"
)

var desired = config.Network{CIDR: "198.18.0.0/15", SubnetLen: 24, BackendType: "vxlan"}.Desired()

// kuboConfig is what kubo's flanneld job writes to v2 before every start.
const kuboConfig = `{"Network":"198.18.0.0/15","Backend":{"Type":"vxlan"}}`

func leaseValue(node string) string {
	return fmt.Sprintf(`{"PublicIP":"%s","BackendType":"vxlan","BackendData":{"VtepMAC":"02:00:c0:00:02:%02x"}}`, node, len(node))
}

var _ = Describe("Import", func() {
	var (
		ctx    context.Context
		prefix string
		v3     *clientv3.Client
	)

	BeforeEach(func() {
		ctx = context.Background()
		prefix = uniquePrefix()
		v3 = v3Client()
	})

	putV2 := func(subnet, node string, ttl int) {
		Expect(member.Put(prefix+"/subnets/"+subnet, leaseValue(node), ttl)).To(Succeed())
	}
	read := func() v2import.Data {
		data, err := v2import.Read(ctx, httpClient(), member.URL, prefix)
		Expect(err).NotTo(HaveOccurred())
		return data
	}
	v3Leases := func() map[string]string {
		resp, err := v3.Get(ctx, prefix+"/subnets/", clientv3.WithPrefix())
		Expect(err).NotTo(HaveOccurred())
		leases := map[string]string{}
		for _, kv := range resp.Kvs {
			Expect(kv.Version).To(Equal(int64(1)), "%s was written more than once", kv.Key)
			leases[strings.TrimPrefix(string(kv.Key), prefix+"/subnets/")] = string(kv.Value)
		}
		return leases
	}
	ttlLeft := func(subnet string) int64 {
		resp, err := v3.Get(ctx, prefix+"/subnets/"+subnet)
		Expect(err).NotTo(HaveOccurred())
		Expect(resp.Kvs).To(HaveLen(1))
		ttl, err := v3.TimeToLive(ctx, clientv3.LeaseID(resp.Kvs[0].Lease))
		Expect(err).NotTo(HaveOccurred())
		return ttl.TTL
	}

	Context("with kubo's network config and live leases in v2", func() {
		BeforeEach(func() {
			Expect(member.Put(prefix+"/config", kuboConfig, 0)).To(Succeed())
			putV2("198.18.7.0-24", "192.0.2.7", 3600)
			putV2("198.18.8.0-24", "192.0.2.8", 1200)
			putV2("198.19.250.0-24", "192.0.2.9", 60)
		})

		It("copies every lease into v3 once, with the TTL it has left, and writes nothing to v2", func() {
			logger, logs := testlog.New()
			v2Index, err := member.V2Index()
			Expect(err).NotTo(HaveOccurred())

			result, err := v2import.Import(ctx, v3, prefix, desired, read(), logger)

			Expect(err).NotTo(HaveOccurred())
			Expect(result.Leases).To(ConsistOf(prefix+"/subnets/198.18.7.0-24", prefix+"/subnets/198.18.8.0-24", prefix+"/subnets/198.19.250.0-24"))
			Expect(v3Leases()).To(Equal(map[string]string{"198.18.7.0-24": leaseValue("192.0.2.7"),
				"198.18.8.0-24": leaseValue("192.0.2.8"), "198.19.250.0-24": leaseValue("192.0.2.9")}))
			Expect(ttlLeft("198.18.7.0-24")).To(BeNumerically("~", 3600, 15))
			Expect(ttlLeft("198.18.8.0-24")).To(BeNumerically("~", 1200, 15))
			Expect(ttlLeft("198.19.250.0-24")).To(BeNumerically("~", 60, 15))
			Expect(logs).To(gbytes.Say(`Imported 3 leases of kubo's flanneld from the v2 store into v3: .*198.18.7.0/24 \(192.0.2.7, 3[0-9]{3} s left\)`))
			config, err := v3.Get(ctx, prefix+"/config")
			Expect(err).NotTo(HaveOccurred())
			Expect(config.Kvs).To(BeEmpty(), "the network config is netconfig's to write")
			Expect(member.V2Index()).To(Equal(v2Index), "something was written to v2")

			again, err := v2import.Import(ctx, v3, prefix, desired, read(), logger)
			Expect(err).NotTo(HaveOccurred())
			Expect(again.Leases).To(BeEmpty())
			Expect(v3Leases()).To(HaveLen(3))
		})

		It("copies each lease once when five launchers import at the same moment", func() {
			const launchers = 5
			clients, datas := make([]*clientv3.Client, launchers), make([]v2import.Data, launchers)
			for i := range launchers {
				clients[i], datas[i] = v3Client(), read()
			}
			results, errs := make([]v2import.Result, launchers), make([]error, launchers)
			start := make(chan struct{})
			var wg sync.WaitGroup
			for i := range launchers {
				wg.Go(func() {
					logger, _ := testlog.New()
					<-start
					results[i], errs[i] = v2import.Import(ctx, clients[i], prefix, desired, datas[i], logger)
				})
			}
			close(start)
			wg.Wait()

			var written []string
			for i := range launchers {
				Expect(errs[i]).NotTo(HaveOccurred())
				written = append(written, results[i].Leases...)
			}
			Expect(written).To(ConsistOf(prefix+"/subnets/198.18.7.0-24", prefix+"/subnets/198.18.8.0-24", prefix+"/subnets/198.19.250.0-24"))
			Expect(v3Leases()).To(HaveLen(3)) // and each at version 1
		})

		It("never overwrites a v3 lease, and leaves out the v2 lease of a node that holds one in v3", func() {
			grant, err := v3.Grant(ctx, 600)
			Expect(err).NotTo(HaveOccurred())
			_, err = v3.Put(ctx, prefix+"/subnets/198.18.8.0-24", leaseValue("192.0.2.80"), clientv3.WithLease(grant.ID))
			Expect(err).NotTo(HaveOccurred())
			_, err = v3.Put(ctx, prefix+"/subnets/198.18.70.0-24", leaseValue("192.0.2.7"), clientv3.WithLease(grant.ID))
			Expect(err).NotTo(HaveOccurred())
			logger, _ := testlog.New()

			result, err := v2import.Import(ctx, v3, prefix, desired, read(), logger)

			Expect(err).NotTo(HaveOccurred())
			Expect(result.Leases).To(ConsistOf(prefix + "/subnets/198.19.250.0-24"))
			Expect(v3Leases()).To(Equal(map[string]string{"198.18.8.0-24": leaseValue("192.0.2.80"),
				"198.18.70.0-24": leaseValue("192.0.2.7"), "198.19.250.0-24": leaseValue("192.0.2.9")}))
		})

		It("imports nothing when flanneld's network is another one, and says which", func() {
			_, err := v3.Put(ctx, prefix+"/config", `{"Network":"198.18.0.0/16","Backend":{"Type":"vxlan"}}`)
			Expect(err).NotTo(HaveOccurred())
			logger, _ := testlog.New()

			_, err = v2import.Import(ctx, v3, prefix, desired, read(), logger)

			Expect(err).To(MatchError(ContainSubstring("The v2 network config names 198.18.0.0/15, flanneld's (in v3 or to be written) 198.18.0.0/16")))
			var transient *v2import.TransientError
			Expect(errors.As(err, &transient)).To(BeFalse(), "retrying cannot make the networks agree")
			Expect(v3Leases()).To(BeEmpty())
		})
	})

	It("leaves out, in one log line, the leases flannel would not read, and copies the others", func() {
		Expect(member.Put(prefix+"/config", kuboConfig, 0)).To(Succeed())
		putV2("198.18.7.0-24", "192.0.2.7", 3600)
		putV2("10.200.7.0-24", "192.0.2.10", 3600)
		putV2("198.18.9.0-24", "192.0.2.9", 0)
		Expect(member.Put(prefix+"/subnets/198.18.11.0-24", "not json", 3600)).To(Succeed())
		Expect(member.Put(prefix+"/subnets/198.18.12.0-24", `{"BackendType":"vxlan"}`, 3600)).To(Succeed())
		Expect(member.Put(prefix+"/subnets/not-a-subnet", leaseValue("192.0.2.13"), 3600)).To(Succeed())
		logger, logs := testlog.New()

		result, err := v2import.Import(ctx, v3, prefix, desired, read(), logger)

		Expect(err).NotTo(HaveOccurred())
		Expect(result.Leases).To(ConsistOf(prefix + "/subnets/198.18.7.0-24"))
		Expect(result.LeftOut).To(HaveLen(5))
		Expect(strings.Count(string(logs.Contents()), "Left out")).To(Equal(1))
		Expect(logs).To(gbytes.Say(`Left out 5 of the v2 store's leases.*10.200.7.0-24: subnet 10.200.7.0/24 is not inside the network 198.18.0.0/15`))
		Expect(string(logs.Contents())).To(And(ContainSubstring("198.18.9.0-24: it has no TTL"),
			ContainSubstring("198.18.11.0-24: its value is not JSON"), ContainSubstring("198.18.12.0-24: its value names no IPv4 PublicIP"),
			ContainSubstring("'not-a-subnet' does not name an IPv4 subnet")))
		Expect(v3Leases()).To(HaveLen(1))
	})

	It("imports nothing when the v2 network config is not one, naming its key", func() {
		Expect(member.Put(prefix+"/config", "garbage", 0)).To(Succeed())
		putV2("198.18.7.0-24", "192.0.2.7", 3600)
		logger, _ := testlog.New()

		_, err := v2import.Import(ctx, v3, prefix, desired, read(), logger)

		Expect(err).To(MatchError(ContainSubstring("The network config at '%s/config' in the v2 store: is not JSON", prefix)))
		Expect(v3Leases()).To(BeEmpty())
	})

	It("imports leases without their network config in v2 as nothing, naming what is missing", func() {
		putV2("198.18.7.0-24", "192.0.2.7", 3600)
		logger, _ := testlog.New()

		_, err := v2import.Import(ctx, v3, prefix, desired, read(), logger)

		Expect(err).To(MatchError(ContainSubstring("/config' in the v2 store: is absent")))
		Expect(v3Leases()).To(BeEmpty())
	})

	// etcd takes a request up to 1.5 MiB: 25 leases of 63 KiB do not go in one transaction, each goes alone.
	It("writes the leases one by one when etcd refuses their transaction as too large", func() {
		Expect(member.Put(prefix+"/config", kuboConfig, 0)).To(Succeed())
		var keys []string
		for i := range 25 {
			value := fmt.Sprintf(`{"PublicIP":"192.0.2.%d","BackendType":"vxlan","Padding":"%s"}`, i+1, strings.Repeat("x", 63<<10))
			Expect(member.Put(prefix+fmt.Sprintf("/subnets/198.18.%d.0-24", i+1), value, 3600)).To(Succeed())
			keys = append(keys, prefix+fmt.Sprintf("/subnets/198.18.%d.0-24", i+1))
		}
		logger, _ := testlog.New()

		result, err := v2import.Import(ctx, v3, prefix, desired, read(), logger)

		Expect(err).NotTo(HaveOccurred())
		Expect(result.Leases).To(ConsistOf(keys))
		Expect(result.LeftOut).To(BeEmpty())
		Expect(v3Leases()).To(HaveLen(25))
	})

	// flanneld renews a lease to 24 h; v2 keeps any TTL, and one beyond etcd's 9,000,000,000 s comes only as data
	// (v2 turns one that large into no TTL, its expiry time overflowing).
	It("caps the TTL a lease keeps at flannel's 24 h", func() {
		Expect(member.Put(prefix+"/config", kuboConfig, 0)).To(Succeed())
		putV2("198.18.7.0-24", "192.0.2.7", 200_000)
		putV2("198.18.10.0-24", "192.0.2.10", 60)
		data := read()
		data.Leases = append(data.Leases, v2import.Lease{Key: prefix + "/subnets/198.18.8.0-24",
			Value: []byte(leaseValue("192.0.2.8")), TTL: 9_100_000_000})
		logger, _ := testlog.New()

		result, err := v2import.Import(ctx, v3, prefix, desired, data, logger)

		Expect(err).NotTo(HaveOccurred())
		Expect(result.LeftOut).To(BeEmpty())
		Expect(ttlLeft("198.18.7.0-24")).To(BeNumerically("~", 24*3600, 15))
		Expect(ttlLeft("198.18.8.0-24")).To(BeNumerically("~", 24*3600, 15))
		Expect(ttlLeft("198.18.10.0-24")).To(BeNumerically("~", 60, 15))
	})

	It("leaves out a lease whose value is larger than 64 KiB, which etcd would take", func() {
		Expect(member.Put(prefix+"/config", kuboConfig, 0)).To(Succeed())
		putV2("198.18.7.0-24", "192.0.2.7", 3600)
		oversized := fmt.Sprintf(`{"PublicIP":"192.0.2.9","BackendType":"vxlan","Padding":"%s"}`, strings.Repeat("x", 100<<10))
		Expect(member.Put(prefix+"/subnets/198.18.9.0-24", oversized, 3600)).To(Succeed())
		logger, logs := testlog.New()

		result, err := v2import.Import(ctx, v3, prefix, desired, read(), logger)

		Expect(err).NotTo(HaveOccurred())
		Expect(result.Leases).To(ConsistOf(prefix + "/subnets/198.18.7.0-24"))
		Expect(logs).To(gbytes.Say(`Left out 1 of the v2 store's leases.*198.18.9.0-24: its value is %d bytes, more than 65536`, len(oversized)))
		Expect(v3Leases()).To(HaveLen(1))
	})

	It("leaves out both of two v2 leases that overlap, each naming the other's key", func() {
		Expect(member.Put(prefix+"/config", kuboConfig, 0)).To(Succeed())
		putV2("198.18.7.0-24", "192.0.2.7", 3600)
		putV2("198.18.8.0-24", "192.0.2.8", 3600)
		putV2("198.18.8.128-25", "192.0.2.80", 3600)
		logger, logs := testlog.New()

		result, err := v2import.Import(ctx, v3, prefix, desired, read(), logger)

		Expect(err).NotTo(HaveOccurred())
		Expect(result.Leases).To(ConsistOf(prefix + "/subnets/198.18.7.0-24"))
		Expect(result.LeftOut).To(ConsistOf(
			fmt.Sprintf("%s/subnets/198.18.8.0-24: subnet 198.18.8.0/24 overlaps the v2 lease at '%s/subnets/198.18.8.128-25'", prefix, prefix),
			fmt.Sprintf("%s/subnets/198.18.8.128-25: subnet 198.18.8.128/25 overlaps the v2 lease at '%s/subnets/198.18.8.0-24'", prefix, prefix)))
		Expect(logs).To(gbytes.Say(`Left out 2 of the v2 store's leases`))
		Expect(v3Leases()).To(HaveLen(1))
	})

	DescribeTable("leaves out a lease whose length is not the network config's subnet length",
		func(v2Config string, subnetLen int, kept, leftOut string) {
			Expect(member.Put(prefix+"/config", v2Config, 0)).To(Succeed())
			putV2("198.18.7.0-24", "192.0.2.7", 3600)
			putV2("198.18.9.0-26", "192.0.2.9", 3600)
			flanneld := config.Network{CIDR: "198.18.0.0/15", SubnetLen: subnetLen, BackendType: "vxlan"}.Desired()
			logger, _ := testlog.New()

			result, err := v2import.Import(ctx, v3, prefix, flanneld, read(), logger)

			Expect(err).NotTo(HaveOccurred())
			Expect(result.Leases).To(ConsistOf(prefix + "/subnets/" + kept))
			Expect(result.LeftOut).To(ConsistOf(fmt.Sprintf("%s/subnets/%s: subnet %s is not a /%d, the network config's subnet length",
				prefix, leftOut, strings.Replace(leftOut, "-", "/", 1), subnetLen)))
		},
		Entry("flannel's /24 when it names none", kuboConfig, 24, "198.18.7.0-24", "198.18.9.0-26"),
		Entry("the one it names", `{"Network":"198.18.0.0/15","SubnetLen":26,"Backend":{"Type":"vxlan"}}`, 26,
			"198.18.9.0-26", "198.18.7.0-24"),
	)

	It("imports nothing when the v2 network config's subnet length is not flanneld's, and says which", func() {
		Expect(member.Put(prefix+"/config", kuboConfig, 0)).To(Succeed())
		putV2("198.18.7.0-24", "192.0.2.7", 3600)
		desired26 := config.Network{CIDR: "198.18.0.0/15", SubnetLen: 26, BackendType: "vxlan"}.Desired()
		logger, _ := testlog.New()

		_, err := v2import.Import(ctx, v3, prefix, desired26, read(), logger)

		Expect(err).To(MatchError(ContainSubstring("The v2 network config gives /24 subnets, flanneld's (in v3 or to be written) /26")))
		Expect(v3Leases()).To(BeEmpty())
	})

	It("leaves out a v2 lease whose subnet overlaps a v3 lease under another key", func() {
		Expect(member.Put(prefix+"/config", kuboConfig, 0)).To(Succeed())
		putV2("198.18.7.0-24", "192.0.2.7", 3600)
		putV2("198.18.8.0-24", "192.0.2.8", 3600)
		putV2("198.18.17.0-24", "192.0.2.17", 3600)
		grant, err := v3.Grant(ctx, 600)
		Expect(err).NotTo(HaveOccurred())
		for _, subnet := range []string{"198.18.8.128-25", "198.18.16.0-20"} {
			_, err = v3.Put(ctx, prefix+"/subnets/"+subnet, leaseValue("192.0.2.80"), clientv3.WithLease(grant.ID))
			Expect(err).NotTo(HaveOccurred())
		}
		logger, logs := testlog.New()

		result, err := v2import.Import(ctx, v3, prefix, desired, read(), logger)

		Expect(err).NotTo(HaveOccurred())
		Expect(result.Leases).To(ConsistOf(prefix + "/subnets/198.18.7.0-24"))
		Expect(v3Leases()).To(HaveLen(3))
		Expect(string(logs.Contents())).To(And(
			ContainSubstring("198.18.8.0-24: subnet 198.18.8.0/24 overlaps the v3 lease at '%s/subnets/198.18.8.128-25'", prefix),
			ContainSubstring("198.18.17.0-24: subnet 198.18.17.0/24 overlaps the v3 lease at '%s/subnets/198.18.16.0-20'", prefix)))
	})

	It("copies more leases than etcd takes in one transaction", func() {
		Expect(member.Put(prefix+"/config", kuboConfig, 0)).To(Succeed())
		for i := range 150 {
			putV2(fmt.Sprintf("198.18.%d.0-24", i+1), fmt.Sprintf("198.51.100.%d", i+1), 3600)
		}
		logger, _ := testlog.New()

		result, err := v2import.Import(ctx, v3, prefix, desired, read(), logger)

		Expect(err).NotTo(HaveOccurred())
		Expect(result.Leases).To(HaveLen(150))
		Expect(v3Leases()).To(HaveLen(150))
	})
})

// A start while etcd has lost its quorum: the v2 store still answers reads, v3 takes no write and answers no
// linearizable read.
var _ = Describe("Import while etcd has no quorum", Ordered, func() {
	var (
		three  []*etcdv2.Member
		prefix = uniquePrefix()
	)

	BeforeAll(func() {
		var err error
		three, err = etcdv2.StartCluster(suiteCA, nil, 3)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() {
			for _, m := range three {
				m.Close()
			}
		})
		Expect(three[0].Put(prefix+"/config", kuboConfig, 0)).To(Succeed())
		Expect(three[0].Put(prefix+"/subnets/198.18.7.0-24", leaseValue("192.0.2.7"), 3600)).To(Succeed())
		three[1].Stop()
		three[2].Stop()
	})

	It("fails with a TransientError, and imports once the quorum is back", func() {
		v3 := v3ClientOf(three[0])
		data, err := v2import.Read(context.Background(), httpClient(), three[0].URL, prefix)
		Expect(err).NotTo(HaveOccurred())
		Expect(data.Leases).To(HaveLen(1))
		logger, _ := testlog.New()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()

		_, err = v2import.Import(ctx, v3, prefix, desired, data, logger)

		var transient *v2import.TransientError
		Expect(errors.As(err, &transient)).To(BeTrue(), "not a TransientError: %v", err)

		Expect(three[1].Restart()).To(Succeed())
		Expect(three[2].Restart()).To(Succeed())
		Expect(three[0].WaitReady(time.Minute)).To(Succeed())
		result, err := v2import.Import(context.Background(), v3, prefix, desired, data, logger)
		Expect(err).NotTo(HaveOccurred())
		Expect(result.Leases).To(ConsistOf(prefix + "/subnets/198.18.7.0-24"))
	})
})
