package resolve_test

import (
	"context"
	"errors"
	"net"
	"time"

	"github.com/miekg/dns"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/resolve"
	"github.com/flannel-dns/flannel-dns/src/testenv/dnsserver"
	"github.com/flannel-dns/flannel-dns/src/testenv/testlog"
)

var _ = Describe("WaitForAnswer", func() {
	var (
		server   *dnsserver.Server
		resolver *resolve.Resolver
		backoff  = resolve.Backoff{Initial: 10 * time.Millisecond, Max: 40 * time.Millisecond}
	)

	BeforeEach(func() {
		server = startDNS()
		resolver = newResolver(server)
	})

	It("retries until the alias appears, logging each cause", func() {
		logger, logs := testlog.New()
		type answer struct {
			ips []net.IP
			err error
		}
		done := make(chan answer, 1)
		go func() {
			ips, err := resolver.WaitForAnswer(context.Background(), alias, backoff, logger, nil)
			done <- answer{ips, err}
		}()

		Eventually(func() int { return server.Queries(alias, "udp") }).Should(BeNumerically(">=", 3))
		server.SetAddresses(alias, memberA, memberB)

		var got answer
		Eventually(done).Should(Receive(&got))
		Expect(got.err).NotTo(HaveOccurred())
		Expect(addresses(got.ips, nil)).To(ConsistOf("198.51.100.10", "198.51.100.11"))
		Expect(logs).To(gbytes.Say("Attempt 1: looking up 'etcd.test.internal' at .*NXDOMAIN"))
		Expect(logs).To(gbytes.Say("resolves to 198.51.100.10, 198.51.100.11"))
	})

	It("gives up at the deadline saying what it tried", func() {
		logger, _ := testlog.New()
		server.SetRcode(alias, dns.RcodeServerFailure)
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()

		var failures []error
		_, err := resolver.WaitForAnswer(ctx, alias, backoff, logger, func(err error) { failures = append(failures, err) })

		var gaveUp *resolve.GaveUpError
		Expect(errors.As(err, &gaveUp)).To(BeTrue())
		Expect(gaveUp.Attempts).To(BeNumerically(">=", 2))
		Expect(gaveUp.Servers).To(Equal([]string{server.Addr}))
		Expect(lookupError(gaveUp.Last).Cause).To(Equal(resolve.ServerFailure))
		Expect(err.Error()).To(MatchRegexp(`no address for 'etcd.test.internal' from %s after \d+ attempts .*SERVFAIL`, server.Addr))
		Expect(failures).To(HaveLen(gaveUp.Attempts), "each failed attempt is passed on")
		Expect(lookupError(failures[0]).Cause).To(Equal(resolve.ServerFailure))
	})
})

var _ = Describe("Backoff", func() {
	It("doubles from Initial up to Max, each wait between half and all of the step", func() {
		backoff := resolve.Backoff{Initial: 100 * time.Millisecond, Max: time.Second}
		for attempt, step := range map[int]time.Duration{1: 100, 2: 200, 3: 400, 4: 800, 5: 1000, 30: 1000} {
			step *= time.Millisecond
			for range 20 {
				Expect(backoff.Delay(attempt)).To(BeNumerically("~", step*3/4, step/4), "attempt %d", attempt)
			}
		}
	})
})
