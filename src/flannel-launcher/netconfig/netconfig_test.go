package netconfig_test

import (
	"context"
	"path/filepath"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/config"
	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/members"
	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/netconfig"
	"github.com/flannel-dns/flannel-dns/src/testenv/etcdcluster"
	"github.com/flannel-dns/flannel-dns/src/testenv/testlog"
)

var (
	desired = config.Network{CIDR: "198.18.0.0/16", SubnetLen: 24, BackendType: "vxlan"}.Desired()
	off     = netconfig.Enforcement{}
)

func enforcing(record netconfig.Record) netconfig.Enforcement {
	return netconfig.Enforcement{On: true, Record: record}
}

// newRecord is a record path of the spec's own, with no file there yet.
func newRecord() netconfig.Record {
	return netconfig.Record{Path: filepath.Join(GinkgoT().TempDir(), "network-config.enforced")}
}

var _ = Describe("Ensure", func() {
	var (
		client *clientv3.Client
		key    string
		ctx    context.Context
	)

	BeforeEach(func() {
		client = newClient()
		key = uniqueKey()
		ctx = context.Background()
	})

	stored := func() *clientv3.GetResponse {
		resp, err := client.Get(ctx, key)
		Expect(err).NotTo(HaveOccurred())
		Expect(resp.Kvs).To(HaveLen(1))
		return resp
	}

	put := func(value string) {
		_, err := client.Put(ctx, key, value)
		Expect(err).NotTo(HaveOccurred())
	}

	It("creates an absent config", func() {
		logger, logs := testlog.New()

		result, err := netconfig.Ensure(ctx, client, key, desired, off, logger)

		Expect(err).NotTo(HaveOccurred())
		Expect(result.Created).To(BeTrue())
		Expect(string(stored().Kvs[0].Value)).To(Equal(string(desired)))
		Expect(logs).To(gbytes.Say("Created the network config at '%s'", key))
	})

	It("is created exactly once when five launchers ensure it at the same moment", func() {
		const launchers = 5
		clients := make([]*clientv3.Client, launchers)
		for i := range clients {
			clients[i] = newClient()
		}
		results := make([]netconfig.Result, launchers)
		errs := make([]error, launchers)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range launchers {
			wg.Go(func() {
				logger, _ := testlog.New()
				<-start
				results[i], errs[i] = netconfig.Ensure(ctx, clients[i], key, desired, off, logger)
			})
		}
		close(start)
		wg.Wait()

		created := 0
		for i := range launchers {
			Expect(errs[i]).NotTo(HaveOccurred())
			if results[i].Created {
				created++
			} else {
				Expect(results[i].State).To(Equal(netconfig.Equal))
			}
		}
		Expect(created).To(Equal(1))
		Expect(stored().Kvs[0].Version).To(Equal(int64(1)), "written more than once")
	})

	It("leaves an equal config alone, whatever its key order and spacing", func() {
		put(`{ "SubnetLen": 24, "Backend": {"Type": "vxlan"}, "Network": "198.18.0.0/16" }`)
		before := stored().Kvs[0].ModRevision

		result, err := netconfig.Ensure(ctx, client, key, desired, enforcing(newRecord()), newLoggerOnly())

		Expect(err).NotTo(HaveOccurred())
		Expect(result.Created || result.Overwritten).To(BeFalse())
		Expect(result.State).To(Equal(netconfig.Equal))
		Expect(stored().Kvs[0].ModRevision).To(Equal(before))
	})

	It("does not overwrite a different config and reports each difference", func() {
		existing := `{"Network":"198.19.0.0/16","SubnetLen":24,"Backend":{"Type":"vxlan","VNI":4}}`
		put(existing)
		logger, logs := testlog.New()

		result, err := netconfig.Ensure(ctx, client, key, desired, off, logger)

		Expect(err).NotTo(HaveOccurred())
		Expect(result.State).To(Equal(netconfig.Different))
		Expect(result.Overwritten).To(BeFalse())
		Expect(result.Differences).To(Equal([]string{
			`Backend.VNI: stored 4, desired absent`,
			`Network: stored "198.19.0.0/16", desired "198.18.0.0/16"`,
		}))
		Expect(string(result.Existing)).To(Equal(existing))
		Expect(string(stored().Kvs[0].Value)).To(Equal(existing))
		Expect(logs).To(gbytes.Say("differs from the desired one and is left as it is"))
	})

	It("reports a stored value that is not JSON as different", func() {
		put("not json")

		result, err := netconfig.Ensure(ctx, client, key, desired, off, newLoggerOnly())

		Expect(err).NotTo(HaveOccurred())
		Expect(result.State).To(Equal(netconfig.Different))
		Expect(result.Differences).To(ConsistOf(ContainSubstring(`the stored value is not JSON`)))
	})

	It("overwrites a different config with enforce", func() {
		put(`{"Network":"198.19.0.0/16","SubnetLen":24,"Backend":{"Type":"udp"}}`)
		logger, logs := testlog.New()

		result, err := netconfig.Ensure(ctx, client, key, desired, enforcing(newRecord()), logger)

		Expect(err).NotTo(HaveOccurred())
		Expect(result.Overwritten).To(BeTrue())
		Expect(string(stored().Kvs[0].Value)).To(Equal(string(desired)))
		Expect(logs).To(gbytes.Say("Replaced the network config"))
	})

	It("does not overwrite with enforce when the config changed after it was compared", func() {
		put(`{"Network":"198.19.0.0/16","SubnetLen":24,"Backend":{"Type":"udp"}}`)
		interloper := `{"Network":"198.19.0.0/16","SubnetLen":26,"Backend":{"Type":"udp"}}`
		kv := writeAfterGet{KV: client, key: key, value: interloper}

		_, err := netconfig.Ensure(ctx, kv, key, desired, enforcing(newRecord()), newLoggerOnly())

		Expect(err).To(MatchError(ContainSubstring("changed while it was being replaced")))
		Expect(string(stored().Kvs[0].Value)).To(Equal(interloper))
	})
})

var _ = Describe("Read", func() {
	var client *clientv3.Client

	BeforeEach(func() {
		client = newClient()
	})

	It("tells absent, equal and different apart without writing", func() {
		key := uniqueKey()
		ctx := context.Background()

		status, err := netconfig.Read(ctx, client, key, desired)
		Expect(err).NotTo(HaveOccurred())
		Expect(status.State).To(Equal(netconfig.Absent))
		Expect(status.Existing).To(BeNil())

		_, err = client.Put(ctx, key, string(desired))
		Expect(err).NotTo(HaveOccurred())
		status, err = netconfig.Read(ctx, client, key, desired)
		Expect(err).NotTo(HaveOccurred())
		Expect(status.State).To(Equal(netconfig.Equal))

		other := config.Network{CIDR: "198.18.0.0/15", SubnetLen: 24, BackendType: "vxlan"}.Desired()
		status, err = netconfig.Read(ctx, client, key, other)
		Expect(err).NotTo(HaveOccurred())
		Expect(status.State).To(Equal(netconfig.Different))
		Expect(status.Existing).To(Equal(desired))
		Expect(status.Desired).To(Equal(other))
	})
})

// A launcher starts while its cluster has no leader (an election) or no quorum (members down). A config that
// is already there must not make it wait on a write it does not need: any member answers the read.
var _ = Describe("With the quorum lost", Ordered, func() {
	var (
		client *clientv3.Client
		three  *etcdcluster.Cluster
	)

	BeforeAll(func() {
		var err error
		three, err = etcdcluster.Start(suiteCA, etcdcluster.Options{Size: 3, Domain: "etcd.test.internal"})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(three.Close)
		client = clientOf(three)
		put := func(key string, value []byte) {
			_, err := client.Put(context.Background(), key, string(value))
			Expect(err).NotTo(HaveOccurred())
		}
		put("/quorum/equal/config", desired)
		put("/quorum/different/config", config.Network{CIDR: "198.19.0.0/16", SubnetLen: 24, BackendType: "vxlan"}.Desired())
		three.Stop(1)
		three.Stop(2)
	})

	// the launcher's bound on each attempt's etcd requests
	withTimeout := func() context.Context {
		ctx, cancel := context.WithTimeout(context.Background(), members.RequestTimeout)
		DeferCleanup(cancel)
		return ctx
	}

	It("finds an equal config without writing", func() {
		result, err := netconfig.Ensure(withTimeout(), client, "/quorum/equal/config", desired, off, newLoggerOnly())

		Expect(err).NotTo(HaveOccurred())
		Expect(result.State).To(Equal(netconfig.Equal))
	})

	It("leaves a different config alone, with enforce off, and reports the differences", func() {
		logger, logs := testlog.New()

		result, err := netconfig.Ensure(withTimeout(), client, "/quorum/different/config", desired, off, logger)

		Expect(err).NotTo(HaveOccurred())
		Expect(result.State).To(Equal(netconfig.Different))
		Expect(logs).To(gbytes.Say("differs from the desired one and is left as it is"))
	})

	It("leaves a different config alone, with enforce on and this node's desired config enforced before", func() {
		record := newRecord()
		Expect(record.Save("/quorum/different/config", desired)).To(Succeed())

		result, err := netconfig.Ensure(withTimeout(), client, "/quorum/different/config", desired, enforcing(record), newLoggerOnly())

		Expect(err).NotTo(HaveOccurred())
		Expect(result.KeptNewer).To(BeTrue())
	})

	It("reads for check as Ensure does", func() {
		status, err := netconfig.Read(withTimeout(), client, "/quorum/equal/config", desired)

		Expect(err).NotTo(HaveOccurred())
		Expect(status.State).To(Equal(netconfig.Equal))
	})

	It("fails, naming the write, when the config is absent and must be created", func() {
		_, err := netconfig.Ensure(withTimeout(), client, "/quorum/absent/config", desired, off, newLoggerOnly())

		Expect(err).To(MatchError(ContainSubstring("Writing the network config at '/quorum/absent/config'")))
	})
})

// writeAfterGet is a real etcd KV in which another writer changes the key right after each read, the race
// that the ModRevision guard exists for.
type writeAfterGet struct {
	clientv3.KV
	key, value string
}

func (w writeAfterGet) Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	resp, err := w.KV.Get(ctx, key, opts...)
	if err == nil {
		_, err = w.KV.Put(ctx, w.key, w.value)
	}
	return resp, err
}
