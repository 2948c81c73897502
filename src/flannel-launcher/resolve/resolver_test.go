package resolve_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/miekg/dns"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/config"
	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/resolve"
	"github.com/flannel-dns/flannel-dns/src/testenv/dnsserver"
	"github.com/flannel-dns/flannel-dns/src/testenv/testlog"
)

const alias = "etcd.test.internal"

var (
	memberA = net.ParseIP("198.51.100.10")
	memberB = net.ParseIP("198.51.100.11")
	memberC = net.ParseIP("2001:db8::12")
)

func startDNS() *dnsserver.Server {
	server, err := dnsserver.Start()
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(server.Close)
	return server
}

func newResolver(servers ...*dnsserver.Server) *resolve.Resolver {
	resolver, err := resolve.New(config.DNS{Server: servers[0].Addr}, time.Second)
	Expect(err).NotTo(HaveOccurred())
	return resolver
}

func lookupError(err error) *resolve.LookupError {
	var lookupErr *resolve.LookupError
	Expect(errors.As(err, &lookupErr)).To(BeTrue(), "not a *LookupError: %v", err)
	return lookupErr
}

var _ = Describe("Resolver", func() {
	var (
		server   *dnsserver.Server
		resolver *resolve.Resolver
		ctx      context.Context
	)

	BeforeEach(func() {
		server = startDNS()
		resolver = newResolver(server)
		ctx = context.Background()
	})

	It("returns the A and AAAA addresses", func() {
		server.SetAddresses(alias, memberA, memberB, memberC)

		Expect(addresses(resolver.Lookup(ctx, alias))).To(ConsistOf("198.51.100.10", "198.51.100.11", "2001:db8::12"))
		Expect(server.Queries(alias, "udp")).To(Equal(2))
	})

	It("sees a changed answer at once (TTL 0, no cache)", func() {
		server.SetAddresses(alias, memberA)
		Expect(addresses(resolver.Lookup(ctx, alias))).To(ConsistOf("198.51.100.10"))

		server.SetAddresses(alias, memberB)
		Expect(addresses(resolver.Lookup(ctx, alias))).To(ConsistOf("198.51.100.11"))
	})

	It("asks again over TCP when the UDP answer is truncated", func() {
		var many []net.IP
		for i := range 40 {
			many = append(many, net.IPv4(203, 0, 113, byte(i+1)))
		}
		server.SetAddresses(alias, many...)

		Expect(addresses(resolver.Lookup(ctx, alias))).To(HaveLen(resolve.MaxAddresses))
		Expect(server.Queries(alias, "tcp")).To(BeNumerically(">=", 1))
	})

	It("drops repeated addresses", func() {
		server.SetAddresses(alias, memberA, memberB, memberA, memberC, memberA, memberC)

		Expect(addresses(resolver.Lookup(ctx, alias))).To(Equal([]string{"198.51.100.10", "198.51.100.11", "2001:db8::12"}))
	})

	It("keeps the 16 lowest of more distinct addresses, whatever their order, and logs once what it left out", func() {
		var many []net.IP
		var lowest []string
		for i := range 20 {
			many = append(many, net.IPv4(203, 0, 113, byte(20-i)))
		}
		for i := range 16 {
			lowest = append(lowest, fmt.Sprintf("203.0.113.%d", i+1))
		}
		server.SetAddresses(alias, append(many, many[0])...)
		logger, logs := testlog.New()
		resolver.Logger = logger

		Expect(addresses(resolver.Lookup(ctx, alias))).To(Equal(lowest))
		Expect(addresses(resolver.Lookup(ctx, alias))).To(HaveLen(16))

		Expect(strings.Count(string(logs.Contents()), "leaving out")).To(Equal(1))
		Expect(string(logs.Contents())).To(ContainSubstring("'%s' at %s answered 21 addresses, 1 of them repeats; using 16, "+
			"leaving out the repeats and: [203.0.113.17, 203.0.113.18, 203.0.113.19, 203.0.113.20]", alias, server.Addr))
	})

	DescribeTable("classifies a failed lookup",
		func(setUp func(), cause resolve.Cause, says string) {
			setUp()

			ips, err := resolver.Lookup(ctx, alias)

			Expect(ips).To(BeEmpty())
			Expect(lookupError(err).Cause).To(Equal(cause))
			Expect(err.Error()).To(ContainSubstring(alias))
			Expect(err.Error()).To(ContainSubstring(server.Addr))
			Expect(err.Error()).To(ContainSubstring(says))
		},
		Entry("NXDOMAIN", func() {}, resolve.NXDomain, "NXDOMAIN"),
		Entry("an empty answer", func() { server.SetAddresses(alias) }, resolve.NoAddresses, "empty answer"),
		Entry("SERVFAIL", func() { server.SetRcode(alias, dns.RcodeServerFailure) }, resolve.ServerFailure, "SERVFAIL"),
		Entry("REFUSED", func() { server.SetRcode(alias, dns.RcodeRefused) }, resolve.ServerFailure, "REFUSED"),
		Entry("no answer", func() { server.SetSilent(alias) }, resolve.Timeout, "timeout"),
	)

	It("says the server is unreachable when nothing listens", func() {
		addr := server.Addr
		Expect(server.Close()).To(Succeed())
		resolver, err := resolve.New(config.DNS{Server: addr}, time.Second)
		Expect(err).NotTo(HaveOccurred())

		_, err = resolver.Lookup(ctx, alias)

		Expect(lookupError(err).Cause).To(BeElementOf(resolve.Unreachable, resolve.Timeout))
	})

	Context("with the nameservers of a resolv.conf file", func() {
		writeResolvConf := func(content string) string {
			path := filepath.Join(GinkgoT().TempDir(), "resolv.conf")
			Expect(os.WriteFile(path, []byte(content), 0o644)).To(Succeed())
			return path
		}

		It("asks each listed nameserver on port 53", func() {
			path := writeResolvConf("search test.internal\nnameserver 169.254.0.2\nnameserver 127.0.0.53\n")

			resolver, err := resolve.New(config.DNS{ResolvConf: path}, time.Second)

			Expect(err).NotTo(HaveOccurred())
			Expect(resolver.Servers()).To(Equal([]string{"169.254.0.2:53", "127.0.0.53:53"}))
		})

		It("names dns.resolv_conf when the file lists no nameserver", func() {
			path := writeResolvConf("search test.internal\n")

			_, err := resolve.New(config.DNS{ResolvConf: path}, time.Second)

			Expect(err).To(MatchError(ContainSubstring("dns.resolv_conf '%s' lists no nameserver", path)))
		})

		It("names dns.resolv_conf when the file is missing", func() {
			_, err := resolve.New(config.DNS{ResolvConf: "/nonexistent/resolv.conf"}, time.Second)

			Expect(err).To(MatchError(ContainSubstring("dns.resolv_conf '/nonexistent/resolv.conf'")))
		})
	})

	Context("with two servers", func() {
		var second *dnsserver.Server

		BeforeEach(func() {
			second = startDNS()
			resolver = resolverFor(server, second)
		})

		It("moves on to the next server when one does not answer", func() {
			server.SetSilent(alias)
			second.SetAddresses(alias, memberA)

			Expect(addresses(resolver.Lookup(ctx, alias))).To(ConsistOf("198.51.100.10"))
		})

		It("takes NXDOMAIN as final, as the system resolver does", func() {
			second.SetAddresses(alias, memberA)

			_, err := resolver.Lookup(ctx, alias)

			Expect(lookupError(err).Cause).To(Equal(resolve.NXDomain))
			Expect(second.Queries(alias, "udp")).To(BeZero())
		})
	})
})

// resolverFor asks several test servers; a resolv.conf file cannot name them, as they listen on other ports than 53.
func resolverFor(servers ...*dnsserver.Server) *resolve.Resolver {
	addrs := make([]string, len(servers))
	for i, s := range servers {
		addrs[i] = s.Addr
	}
	return resolve.ForServers(addrs, time.Second)
}

// addresses turns a lookup's result into strings, which compare the same in IPv4 and IPv4-in-IPv6 form.
func addresses(ips []net.IP, err error) []string {
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	strs := make([]string, len(ips))
	for i, ip := range ips {
		strs[i] = ip.String()
	}
	return strs
}
