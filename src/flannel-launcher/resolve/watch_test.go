package resolve_test

import (
	"context"
	"net"
	"time"

	boshlog "github.com/cloudfoundry/bosh-utils/logger"
	"github.com/miekg/dns"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/resolve"
	"github.com/flannel-dns/flannel-dns/src/testenv/dnsserver"
	"github.com/flannel-dns/flannel-dns/src/testenv/testlog"
)

var _ = Describe("Watcher", func() {
	var (
		server  *dnsserver.Server
		watcher *resolve.Watcher
		logs    *gbytes.Buffer
		ctx     context.Context
	)

	BeforeEach(func() {
		server = startDNS()
		var logger boshlog.Logger
		logger, logs = testlog.New()
		watcher = resolve.NewWatcher(newResolver(server), alias, []net.IP{memberA, memberB}, logger)
		ctx = context.Background()
	})

	It("reports and logs added and removed addresses", func() {
		server.SetAddresses(alias, memberB, memberC)

		change, err := watcher.Cycle(ctx)

		Expect(err).NotTo(HaveOccurred())
		Expect(addresses(change.Added, nil)).To(ConsistOf("2001:db8::12"))
		Expect(addresses(change.Removed, nil)).To(ConsistOf("198.51.100.10"))
		Expect(logs).To(gbytes.Say(`'etcd.test.internal' changed: added \[2001:db8::12\], removed \[198.51.100.10\]`))
	})

	It("reports nothing when the answer is the same in another order", func() {
		server.SetAddresses(alias, memberB, memberA)

		change, err := watcher.Cycle(ctx)

		Expect(err).NotTo(HaveOccurred())
		Expect(change.Empty()).To(BeTrue())
		Expect(logs.Contents()).NotTo(ContainSubstring("changed"))
	})

	It("keeps the last answer through a failed lookup", func() {
		server.SetRcode(alias, dns.RcodeServerFailure)
		_, err := watcher.Cycle(ctx)
		Expect(err).To(HaveOccurred())
		Expect(logs).To(gbytes.Say("keeping the last answer \\(198.51.100.10, 198.51.100.11\\).*SERVFAIL"))

		server.SetAddresses(alias, memberA, memberB)
		change, err := watcher.Cycle(ctx)

		Expect(err).NotTo(HaveOccurred())
		Expect(change.Empty()).To(BeTrue())
	})

	It("runs a cycle on every tick until the context ends", func() {
		server.SetAddresses(alias, memberA)
		ticks := make(chan time.Time)
		ctx, cancel := context.WithCancel(ctx)
		stopped := make(chan struct{})
		go func() {
			watcher.Run(ctx, ticks)
			close(stopped)
		}()

		ticks <- time.Now()
		Eventually(logs).Should(gbytes.Say(`removed \[198.51.100.11\]`))
		server.SetAddresses(alias, memberA, memberC)
		ticks <- time.Now()
		Eventually(logs).Should(gbytes.Say(`added \[2001:db8::12\]`))
		Expect(server.Queries(alias, "udp")).To(Equal(4))

		cancel()
		Eventually(stopped).Should(BeClosed())
	})
})
