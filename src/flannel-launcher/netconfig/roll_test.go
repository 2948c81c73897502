package netconfig_test

import (
	"context"
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/config"
	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/netconfig"
	"github.com/flannel-dns/flannel-dns/src/testenv/testlog"
)

// An operator changes the pod network with enforce on. BOSH rolls the nodes one by one, so for a while some
// are rendered with the old config (A) and some with the new one (B), and any of them may restart meanwhile.
// Each node keeps its own record.
var _ = Describe("Changing the network config with enforce, during a roll", func() {
	var (
		client       *clientv3.Client
		key          string
		ctx          context.Context
		node1, node2 netconfig.Record
	)
	configA := config.Network{CIDR: "198.18.0.0/16", SubnetLen: 24, BackendType: "vxlan"}.Desired()
	configB := config.Network{CIDR: "198.18.0.0/15", SubnetLen: 24, BackendType: "vxlan"}.Desired()

	BeforeEach(func() {
		client = newClient()
		key = uniqueKey()
		ctx = context.Background()
		node1, node2 = newRecord(), newRecord()
	})

	stored := func() *clientv3.GetResponse {
		resp, err := client.Get(ctx, key)
		Expect(err).NotTo(HaveOccurred())
		Expect(resp.Kvs).To(HaveLen(1))
		return resp
	}

	// start is one start of a node's launcher rendered with desired.
	start := func(node netconfig.Record, desired []byte) (netconfig.Result, *gbytes.Buffer) {
		logger, logs := testlog.New()
		result, err := netconfig.Ensure(ctx, client, key, desired, enforcing(node), logger)
		Expect(err).NotTo(HaveOccurred())
		return result, logs
	}

	BeforeEach(func() { // both nodes ran on A before the deploy
		result, _ := start(node1, configA)
		Expect(result.Created).To(BeTrue())
		result, _ = start(node2, configA)
		Expect(result.State).To(Equal(netconfig.Equal))
	})

	It("replaces A on the first node updated to B, and a node not yet updated that restarts leaves B alone", func() {
		result, _ := start(node1, configB) // updated
		Expect(result.Overwritten).To(BeTrue())
		Expect(string(stored().Kvs[0].Value)).To(Equal(string(configB)))
		revision := stored().Kvs[0].ModRevision

		result, logs := start(node2, configA) // restarts, not yet updated
		Expect(result.Overwritten).To(BeFalse())
		Expect(result.KeptNewer).To(BeTrue())
		Expect(result.State).To(Equal(netconfig.Different))
		Expect(stored().Kvs[0].ModRevision).To(Equal(revision), "written")
		Expect(logs).To(gbytes.Say(`The network config at '%s' differs from the desired one and is left as it is: this node `+
			`enforced its desired config before, so the stored one is newer than what this node was rendered with`, key))

		result, _ = start(node2, configB) // updated
		Expect(result.State).To(Equal(netconfig.Equal))
		result, _ = start(node1, configB) // restarts
		Expect(result.State).To(Equal(netconfig.Equal))
		Expect(stored().Kvs[0].ModRevision).To(Equal(revision))
	})

	It("replaces B once on the first node rolled back to A, and a node still on B that restarts leaves A alone", func() {
		start(node1, configB)
		start(node2, configB)

		result, _ := start(node1, configA) // rolled back
		Expect(result.Overwritten).To(BeTrue())
		Expect(string(stored().Kvs[0].Value)).To(Equal(string(configA)))
		revision := stored().Kvs[0].ModRevision

		result, _ = start(node2, configB) // restarts, not yet rolled back
		Expect(result.KeptNewer).To(BeTrue())
		result, _ = start(node1, configA) // restarts
		Expect(result.State).To(Equal(netconfig.Equal))
		Expect(stored().Kvs[0].ModRevision).To(Equal(revision), "written")
		Expect(string(stored().Kvs[0].Value)).To(Equal(string(configA)))
	})

	It("replaces the stored config on a node without a record (new, or recreated)", func() {
		start(node1, configB)

		result, logs := start(newRecord(), configA)
		Expect(result.Overwritten).To(BeTrue())
		Expect(string(stored().Kvs[0].Value)).To(Equal(string(configA)))
		Expect(logs).To(gbytes.Say(`Replaced the network config at '%s' \(network.enforce is true`, key))
	})

	It("replaces the stored config when the record is garbled, and records its own", func() {
		start(node1, configB)
		Expect(node2.Save("/another/key", configA)).To(Succeed())

		result, _ := start(node2, configA)
		Expect(result.Overwritten).To(BeTrue())
		Expect(node2.Holds(key, configA)).To(BeTrue())
	})

	It("replaces the stored config when its record cannot be read, and says why", func() {
		start(node1, configB)
		Expect(os.Remove(node2.Path)).To(Succeed())
		Expect(os.Mkdir(node2.Path, 0o700)).To(Succeed())

		result, logs := start(node2, configA)
		Expect(result.Overwritten).To(BeTrue())
		Expect(logs).To(gbytes.Say(`WARN - Reading the enforce record '%s': not a regular file: taken as no record, so this `+
			`node replaces a different stored config with its desired one`, node2.Path))
	})

	It("replaces the stored config and runs on when the record cannot be written, and says so", func() {
		start(node1, configB)
		unwritable := netconfig.Record{Path: filepath.Join(GinkgoT().TempDir(), "missing", "network-config.enforced")}

		result, logs := start(unwritable, configA)
		Expect(result.Overwritten).To(BeTrue())
		Expect(logs).To(gbytes.Say(`ERROR - Writing the enforce record '%s': .*no such file or directory: the next start of this `+
			`node will replace a different stored config again`, unwritable.Path))
	})

	It("records nothing when the replacement did not go through", func() {
		start(node1, configB)
		interloper := config.Network{CIDR: "198.18.0.0/16", SubnetLen: 26, BackendType: "vxlan"}.Desired()
		kv := writeAfterGet{KV: client, key: key, value: string(interloper)}
		recreated := newRecord()

		_, err := netconfig.Ensure(ctx, kv, key, configA, enforcing(recreated), newLoggerOnly())

		Expect(err).To(MatchError(ContainSubstring("changed while it was being replaced")))
		Expect(recreated.Path).NotTo(BeAnExistingFile())
	})

	It("with enforce off, removes the record, so that turning enforce on replaces a different config once", func() {
		_, err := client.Put(ctx, key, string(configB)) // set by hand, or by another deployment
		Expect(err).NotTo(HaveOccurred())

		result, err := netconfig.Ensure(ctx, client, key, configA, netconfig.Enforcement{Record: node2}, newLoggerOnly())
		Expect(err).NotTo(HaveOccurred())
		Expect(result.Overwritten).To(BeFalse())
		Expect(node2.Holds(key, configA)).To(BeFalse())

		result, _ = start(node2, configA) // enforce turned on
		Expect(result.Overwritten).To(BeTrue())
	})
})
