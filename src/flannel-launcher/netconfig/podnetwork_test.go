package netconfig_test

import (
	"context"
	"net/netip"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/netconfig"
)

var _ = Describe("the pod network of a config", func() {
	DescribeTable("is its Network and SubnetLen, or flannel's default subnet length",
		func(config string, network string, subnetLen int) {
			pod, err := netconfig.PodNetworkOf([]byte(config))
			Expect(err).NotTo(HaveOccurred())
			Expect(pod).To(Equal(netconfig.PodNetwork{Network: netip.MustParsePrefix(network), SubnetLen: subnetLen}))
		},
		Entry("both named", `{"Network":"198.18.0.0/16","SubnetLen":26}`, "198.18.0.0/16", 26),
		Entry("no SubnetLen in a /16", `{"Network":"198.18.0.0/16"}`, "198.18.0.0/16", 24),
		Entry("no SubnetLen in a /22", `{"Network":"198.18.0.0/22"}`, "198.18.0.0/22", 24),
		Entry("no SubnetLen in a /23: a quarter of it", `{"Network":"198.18.0.0/23"}`, "198.18.0.0/23", 25),
		Entry("host bits, as flannel masks them", `{"Network":"198.18.9.9/16"}`, "198.18.0.0/16", 24),
	)

	DescribeTable("says what a config lacks",
		func(config []byte, lacks string) {
			_, err := netconfig.PodNetworkOf(config)
			Expect(err).To(MatchError(ContainSubstring(lacks)))
		},
		Entry("none", nil, "is absent"),
		Entry("not JSON", []byte("not json"), "is not JSON"),
		Entry("an IPv6 network", []byte(`{"Network":"2001:db8::/64"}`), "has no IPv4 Network"),
		Entry("no network", []byte(`{"SubnetLen":24}`), "has no IPv4 Network"),
	)

	Describe("that flanneld starts on after Ensure", func() {
		var (
			client  *clientv3.Client
			key     string
			ctx     = context.Background()
			another = `{"Network":"198.19.0.0/16","Backend":{"Type":"vxlan"}}`
		)
		BeforeEach(func() {
			client, key = newClient(), uniqueKey()
		})
		effective := func(enforce netconfig.Enforcement) string {
			result, err := netconfig.Ensure(ctx, client, key, desired, enforce, newLoggerOnly())
			Expect(err).NotTo(HaveOccurred())
			return string(result.Effective())
		}
		put := func(value string) {
			_, err := client.Put(ctx, key, value)
			Expect(err).NotTo(HaveOccurred())
		}

		It("is the desired one when Ensure created it", func() {
			Expect(effective(off)).To(Equal(string(desired)))
		})
		It("is the stored one when Ensure left a different one", func() {
			put(another)
			Expect(effective(off)).To(Equal(another))
		})
		It("is the desired one when Ensure replaced a different one", func() {
			put(another)
			Expect(effective(enforcing(newRecord()))).To(Equal(string(desired)))
		})
		It("is the stored one when this node enforced its desired one before", func() {
			record := newRecord()
			Expect(effective(enforcing(record))).To(Equal(string(desired)))
			put(another)
			Expect(effective(enforcing(record))).To(Equal(another))
		})
	})
})
