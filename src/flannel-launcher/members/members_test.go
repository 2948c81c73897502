package members_test

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"regexp"
	"strconv"
	"time"

	boshlog "github.com/cloudfoundry/bosh-utils/logger"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"

	"github.com/flannel-dns/flannel-dns/src/e2e/impostor"
	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/config"
	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/members"
	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/resolve"
	"github.com/flannel-dns/flannel-dns/src/testenv/etcdcluster"
	"github.com/flannel-dns/flannel-dns/src/testenv/loopback"
	"github.com/flannel-dns/flannel-dns/src/testenv/pki"
	"github.com/flannel-dns/flannel-dns/src/testenv/testlog"
)

type discovery struct {
	certs   []members.ServerCert
	members []members.Member
	logs    *gbytes.Buffer
	took    time.Duration
}

// discover runs the launcher's startup sequence: resolve the alias, check the certificates on its
// addresses, list and probe the members through the alias.
func discover(cfg config.Config) (discovery, error) {
	return discoverWaiting(cfg, false)
}

// discoverWaiting with wait true waits for every address and member (members.Cluster.WaitForAll).
func discoverWaiting(cfg config.Config, wait bool) (discovery, error) {
	logger, logs := testlog.New()
	started := time.Now()
	found, err := discoverWith(cfg, logger, wait)
	found.logs, found.took = logs, time.Since(started)
	GinkgoWriter.Printf("discovery took %s\n", found.took)
	return found, err
}

func discoverWith(cfg config.Config, logger boshlog.Logger, wait bool) (discovery, error) {
	var found discovery
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ips, err := resolver.Lookup(ctx, cfg.Etcd.Alias)
	if err != nil {
		return found, err
	}
	etcd, err := members.New(cfg, resolver, logger)
	if err != nil {
		return found, err
	}
	if wait {
		etcd.WaitForAll()
	}
	pass := etcd.NewPass()
	defer pass.Close()
	if found.certs, err = pass.CheckServerCerts(ctx, ips); err != nil {
		return found, err
	}
	found.members, err = pass.Members(ctx)
	return found, err
}

func byName(list []members.Member, name string) members.Member {
	for _, m := range list {
		if m.Name == name {
			return m
		}
	}
	Fail("no member named " + name)
	return members.Member{}
}

func certError(err error) *members.CertError {
	var certErr *members.CertError
	ExpectWithOffset(1, errors.As(err, &certErr)).To(BeTrue(), "not a *CertError: %v", err)
	return certErr
}

var _ = Describe("Discovering the members through the alias", func() {
	It("finds every member healthy, one of them the leader", func() {
		found, err := discover(launcherConfig())
		Expect(err).NotTo(HaveOccurred())

		Expect(found.members).To(HaveLen(3))
		leaders := 0
		for i, m := range found.members {
			Expect(m.Name).To(Equal(cluster.Members[i].Name))
			Expect(m.ClientURL).To(Equal(cluster.Members[i].ClientURL))
			Expect(m.Healthy()).To(BeTrue(), "%s: %v", m.Name, m.Err)
			Expect(m.Version).To(Equal("3.6.16"))
			Expect(m.RTT).To(BeNumerically(">", 0))
			if m.Leader {
				leaders++
			}
		}
		Expect(leaders).To(Equal(1))
		Expect(members.HealthyURLs(found.members)).To(Equal([]string{
			cluster.Members[0].ClientURL, cluster.Members[1].ClientURL, cluster.Members[2].ClientURL}))
		Expect(found.logs).To(gbytes.Say("Member 'member-0' at https://member-0.etcd.test.internal:\\d+ is healthy"))
	})

	It("reports the server certificate of every alias address", func() {
		found, err := discover(launcherConfig())
		Expect(err).NotTo(HaveOccurred())

		Expect(found.certs).To(HaveLen(3))
		for _, cert := range found.certs {
			Expect(cert.Err).NotTo(HaveOccurred())
			Expect(cert.CoversAlias).To(BeTrue())
			Expect(cert.DNSNames).To(ContainElement("etcd.test.internal"))
			Expect(cert.NotAfter).To(BeTemporally(">", time.Now()))
		}
	})

	It("starts once the alias, first unknown, appears", func() {
		dns.Remove(cluster.Alias)
		logger, logs := testlog.New()
		backoff := resolve.Backoff{Initial: 10 * time.Millisecond, Max: 50 * time.Millisecond}
		answered := make(chan []net.IP, 1)
		go func() {
			defer GinkgoRecover()
			ips, err := resolver.WaitForAnswer(context.Background(), cluster.Alias, backoff, logger, nil)
			Expect(err).NotTo(HaveOccurred())
			answered <- ips
		}()
		Eventually(logs).Should(gbytes.Say("NXDOMAIN"))

		cluster.Publish(dns)

		Eventually(answered, 5*time.Second).Should(Receive(HaveLen(3)))
		found, err := discover(launcherConfig())
		Expect(err).NotTo(HaveOccurred())
		Expect(members.HealthyURLs(found.members)).To(HaveLen(3))
	})

	Context("when a member is stopped before the start", func() {
		BeforeEach(func() {
			cluster.Stop(2)
			DeferCleanup(func() { Expect(cluster.Restart(2)).To(Succeed()) })
		})

		It("leaves it out and keeps the others", func() {
			found, err := discover(launcherConfig())
			Expect(err).NotTo(HaveOccurred())

			Expect(found.certs[2].Err).To(HaveOccurred())
			stopped := byName(found.members, "member-2")
			Expect(stopped.Healthy()).To(BeFalse())
			Expect(stopped.Resolves).To(BeTrue())
			Expect(stopped.Err).To(HaveOccurred())
			Expect(members.HealthyURLs(found.members)).To(Equal([]string{
				cluster.Members[0].ClientURL, cluster.Members[1].ClientURL}))
			Expect(found.logs).To(gbytes.Say("Member 'member-2' at .* is left out"))
		})
	})

	// A start during a quorum loss or a leader election: any member answers a serializable member list.
	Context("when two of the three members are stopped (no quorum)", func() {
		BeforeEach(func() {
			cluster.Stop(1)
			cluster.Stop(2)
			DeferCleanup(func() {
				Expect(cluster.Restart(1)).To(Succeed())
				Expect(cluster.Restart(2)).To(Succeed())
			})
		})

		It("lists every member through the one left, within the launcher's request timeout", func() {
			cfg := launcherConfig()
			ips, err := resolver.Lookup(context.Background(), cfg.Etcd.Alias)
			Expect(err).NotTo(HaveOccurred())
			logger, _ := testlog.New()
			etcd, err := members.New(cfg, resolver, logger)
			Expect(err).NotTo(HaveOccurred())
			pass := etcd.NewPass()
			DeferCleanup(pass.Close)
			_, _ = pass.CheckServerCerts(context.Background(), ips) // as run does first; two addresses refuse
			ctx, cancel := context.WithTimeout(context.Background(), members.RequestTimeout)
			DeferCleanup(cancel)

			list, err := pass.Members(ctx)

			Expect(err).NotTo(HaveOccurred())
			Expect(list).To(HaveLen(3))
			Expect(members.HealthyURLs(list)).To(Equal([]string{cluster.Members[0].ClientURL}))
		})
	})

	Context("when a member accepts connections and never answers", func() {
		BeforeEach(func() {
			Expect(cluster.BlackHole(1)).To(Succeed())
			DeferCleanup(func() { Expect(cluster.Restart(1)).To(Succeed()) })
		})

		It("leaves it out once the others answered, without waiting for the probe timeout", func() {
			found, err := discover(launcherConfig())
			Expect(err).NotTo(HaveOccurred())

			Expect(found.certs[1].Err).To(MatchError(MatchRegexp(
				`^no TLS handshake within \d+ms, by when 2 of the alias' 3 addresses had answered$`)))
			hole := byName(found.members, "member-1")
			Expect(hole.Answered).To(BeFalse())
			Expect(hole.Err).To(MatchError(ContainSubstring("No TLS handshake with its address: no TLS handshake within")))
			Expect(members.HealthyURLs(found.members)).To(Equal([]string{
				cluster.Members[0].ClientURL, cluster.Members[2].ClientURL}))
			Expect(found.took).To(BeNumerically("<", probeTimeout))
			AddReportEntry("discovery with a black-holed member", found.took.String())
		})

		It("leaves it out after the probe timeout when told to wait for all, as check is", func() {
			found, err := discoverWaiting(launcherConfig(), true)
			Expect(err).NotTo(HaveOccurred())

			Expect(found.certs[1].Err).To(MatchError("no TLS handshake within the probe timeout (2s)"))
			hole := byName(found.members, "member-1")
			Expect(hole.Answered).To(BeFalse())
			Expect(hole.Err).To(MatchError(ContainSubstring("no TLS handshake within the probe timeout")))
			Expect(members.HealthyURLs(found.members)).To(Equal([]string{
				cluster.Members[0].ClientURL, cluster.Members[2].ClientURL}))
		})

		It("blames the caller's deadline, not the probe timeout, when that cuts the handshake short", func() {
			cfg := launcherConfig()
			logger, _ := testlog.New()
			etcd, err := members.New(cfg, resolver, logger)
			Expect(err).NotTo(HaveOccurred())
			pass := etcd.NewPass()
			DeferCleanup(pass.Close)
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			DeferCleanup(cancel)

			certs, _ := pass.CheckServerCerts(ctx, []net.IP{cluster.Members[1].IP})

			Expect(certs[0].Err).To(MatchError("TLS handshake cut short: context deadline exceeded"))
		})
	})

	Context("when a member's host name does not resolve here", func() {
		BeforeEach(func() {
			dns.Remove(cluster.Members[0].Host)
		})

		It("marks it and leaves it out", func() {
			found, err := discover(launcherConfig())
			Expect(err).NotTo(HaveOccurred())

			unresolved := byName(found.members, "member-0")
			Expect(unresolved.Resolves).To(BeFalse())
			Expect(unresolved.Healthy()).To(BeFalse())
			Expect(unresolved.Err).To(MatchError(ContainSubstring("NXDOMAIN")))
			Expect(members.HealthyURLs(found.members)).To(Equal([]string{
				cluster.Members[1].ClientURL, cluster.Members[2].ClientURL}))
		})
	})
	Context("when the alias also answers with an impostor whose certificate another CA signed", func() {
		var stranger *impostor.Listener

		BeforeEach(func() {
			stranger = startImpostor(cluster.Alias, cluster.Port)
			dns.SetAddresses(cluster.Alias, append(cluster.IPs(), stranger.Addr().Addr().AsSlice())...)
		})

		It("leaves the impostor out with a warning and keeps every member", func() {
			found, err := discover(launcherConfig())
			Expect(err).NotTo(HaveOccurred())

			Expect(found.certs).To(HaveLen(4))
			Expect(certError(found.certs[3].Err).Problem).To(HavePrefix("the server certificate (issued by 'CN=impostor-ca') is not signed by the CA"))
			Expect(members.HealthyURLs(found.members)).To(HaveLen(3))
			Expect(found.logs).To(gbytes.Say("Leaving out an address of '%s' whose certificate does not verify: TLS handshake with etcd at %s",
				cluster.Alias, stranger.Addr()))
			Expect(stranger.Accepted()).To(BeNumerically(">", 0))
			Expect(stranger.Handshakes()).To(BeZero())
		})

		// As a dialer would: the name's first address that takes a connection is the member's, for the probe too.
		It("leaves out a member whose name resolves to the impostor first, while the spoof lasts", func() {
			member := cluster.Members[0]
			dns.SetAddresses(member.Host, stranger.Addr().Addr().AsSlice(), member.IP)

			found, err := discover(launcherConfig())

			Expect(err).NotTo(HaveOccurred())
			spoofed := byName(found.members, member.Name)
			Expect(spoofed.Answered).To(BeFalse())
			Expect(members.HealthyURLs(found.members)).To(Equal([]string{cluster.Members[1].ClientURL, cluster.Members[2].ClientURL}))
			Expect(stranger.Handshakes()).To(BeZero())
		})
	})

	Context("when the alias leaves out a member that still answers", func() {
		BeforeEach(func() {
			dns.SetAddresses(cluster.Alias, cluster.Members[0].IP, cluster.Members[1].IP)
		})

		It("probes it on a connection of its own, verified against its name", func() {
			found, err := discover(launcherConfig())

			Expect(err).NotTo(HaveOccurred())
			Expect(found.certs).To(HaveLen(2))
			Expect(members.HealthyURLs(found.members)).To(Equal([]string{
				cluster.Members[0].ClientURL, cluster.Members[1].ClientURL, cluster.Members[2].ClientURL}))
		})
	})
})

var _ = Describe("An etcd that accepts TLS 1.3 only", func() {
	It("is checked and discovered all the same", func() {
		strict, err := etcdcluster.Start(ca, etcdcluster.Options{Size: 1, Domain: "strict.test.internal", TLSMinVersion: "TLS1.3"})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(strict.Close)
		strict.Publish(dns)
		cfg := launcherConfig()
		cfg.Etcd.Alias, cfg.Etcd.Port = strict.Alias, strict.Port

		found, err := discover(cfg)

		Expect(err).NotTo(HaveOccurred())
		Expect(found.certs[0].CoversAlias).To(BeTrue())
		Expect(members.HealthyURLs(found.members)).To(Equal([]string{strict.Members[0].ClientURL}))
	})
})

// etcd lists a member's client URLs as the member was started with them: http ones and ones with a query too.
var _ = Describe("Members whose client URLs are not https://host:port", Ordered, func() {
	var (
		listed *etcdcluster.Cluster
		plain  = map[string]string{} // member name -> its http URL
	)

	BeforeAll(func() {
		var err error
		listed, err = etcdcluster.Start(ca, etcdcluster.Options{Size: 3, Domain: "urls.test.internal",
			ClientURLs: func(m *etcdcluster.Member) []string {
				if plain[m.Name] == "" {
					port, err := loopback.FreePort([]net.IP{m.IP})
					Expect(err).NotTo(HaveOccurred())
					plain[m.Name] = "http://" + net.JoinHostPort(m.Host, strconv.Itoa(port))
				}
				switch m.Name {
				case "member-0":
					return []string{m.ClientURL + "?insecure=1"}
				case "member-1":
					return []string{plain[m.Name]}
				default:
					return []string{plain[m.Name], m.ClientURL}
				}
			}})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(listed.Close)
	})

	BeforeEach(func() { listed.Publish(dns) })

	It("leaves out a member with only such URLs, naming it and the URL, and takes a member's https one", func() {
		cfg := launcherConfig()
		cfg.Etcd.Alias, cfg.Etcd.Port = listed.Alias, listed.Port

		found, err := discover(cfg)

		Expect(err).NotTo(HaveOccurred())
		Expect(members.HealthyURLs(found.members)).To(Equal([]string{listed.Members[2].ClientURL}))
		Expect(byName(found.members, "member-1").Answered).To(BeFalse(), "it was asked in clear text")
		Expect(found.logs).To(gbytes.Say(`Member 'member-0' at %s\?insecure=1 is left out: its client URL is not of the form https://host:port`,
			regexp.QuoteMeta(listed.Members[0].ClientURL)))
		Expect(found.logs).To(gbytes.Say(`Member 'member-1' at %s is left out: its client URL is not of the form https://host:port`,
			regexp.QuoteMeta(plain["member-1"])))
	})
})

// The alias' check verifies the alias name; each member's own name is checked on the connection its probe takes.
var _ = Describe("Members whose certificates do not cover their own names", Ordered, func() {
	var named *etcdcluster.Cluster

	BeforeAll(func() {
		named = startWithCerts("names.test.internal", func(ca *pki.CA, m *etcdcluster.Member, alias string) (pki.Pair, error) {
			if m.Name == "member-2" {
				return etcdcluster.DefaultServerCert(ca, m, alias)
			}
			return ca.Issue(pki.Server(m.Name, []string{alias}, []net.IP{m.IP}))
		})
	})

	BeforeEach(func() { named.Publish(dns) })

	It("leaves them out, naming the name that the certificate lacks", func() {
		found, err := discover(configFor(named))

		Expect(err).NotTo(HaveOccurred())
		Expect(members.HealthyURLs(found.members)).To(Equal([]string{named.Members[2].ClientURL}))
		for _, m := range named.Members[:2] {
			lacking := byName(found.members, m.Name)
			Expect(lacking.Answered).To(BeFalse())
			Expect(lacking.Err).To(MatchError(ContainSubstring(m.Host)), "member %s", m.Name)
		}
	})
})

// cfcr-etcd's certificate is one for every member, with a wildcard: only the member's ID tells who answered.
var _ = Describe("A member whose name resolves to another member's address", Ordered, func() {
	var wild *etcdcluster.Cluster

	BeforeAll(func() {
		wild = startWithCerts("wild.test.internal", func(ca *pki.CA, m *etcdcluster.Member, alias string) (pki.Pair, error) {
			return ca.Issue(pki.Server(m.Name, []string{alias, "*." + alias}, []net.IP{m.IP}))
		})
	})

	BeforeEach(func() { wild.Publish(dns) })

	It("is left out: another member answered there", func() {
		dns.SetAddresses(wild.Members[1].Host, wild.Members[0].IP)

		found, err := discover(configFor(wild))

		Expect(err).NotTo(HaveOccurred())
		Expect(members.HealthyURLs(found.members)).To(Equal([]string{wild.Members[0].ClientURL, wild.Members[2].ClientURL}))
		Expect(byName(found.members, "member-1").Err).To(MatchError(
			fmt.Sprintf("Probing '%s': another member answered at its address", wild.Members[1].ClientURL)))
	})
})

// startWithCerts starts a three-member cluster under domain whose members get their certificates from
// serverCert; it stops with the container.
func startWithCerts(domain string, serverCert func(*pki.CA, *etcdcluster.Member, string) (pki.Pair, error)) *etcdcluster.Cluster {
	c, err := etcdcluster.Start(ca, etcdcluster.Options{Size: 3, Domain: domain, ServerCert: serverCert})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(c.Close)
	return c
}

// configFor points the launcher's config at c.
func configFor(c *etcdcluster.Cluster) config.Config {
	cfg := launcherConfig()
	cfg.Etcd.Alias, cfg.Etcd.Port = c.Alias, c.Port
	return cfg
}

var _ = DescribeTable("CheckClientURL",
	func(raw string, ok bool) {
		err := members.CheckClientURL(raw)
		if ok {
			Expect(err).NotTo(HaveOccurred())
		} else {
			Expect(err).To(MatchError("its client URL is not of the form https://host:port"))
		}
	},
	Entry("a host name and port", "https://member-0.etcd.test.internal:2379", true),
	Entry("an IPv4 address", "https://192.0.2.10:2379", true),
	Entry("an IPv6 address in brackets", "https://[2001:db8::10]:2379", true),
	Entry("http", "http://member-0.etcd.test.internal:2379", false),
	Entry("unixs", "unixs://member-0:2379", false),
	Entry("no port", "https://member-0.etcd.test.internal", false),
	Entry("an empty port", "https://member-0.etcd.test.internal:", false),
	Entry("a path", "https://member-0.etcd.test.internal:2379/v3", false),
	Entry("a trailing slash", "https://member-0.etcd.test.internal:2379/", false),
	Entry("a query", "https://member-0.etcd.test.internal:2379?x=1", false),
	Entry("an empty query", "https://member-0.etcd.test.internal:2379?", false),
	Entry("a fragment", "https://member-0.etcd.test.internal:2379#x", false),
	Entry("a user", "https://user:secret@member-0.etcd.test.internal:2379", false),
	Entry("no host", "https://:2379", false),
	Entry("not a URL", "https://[2001:db8::10:2379", false),
)

var _ = Describe("TLS problems", func() {
	It("names the alias a server certificate does not cover", func() {
		cfg := launcherConfig()
		cfg.Etcd.Alias = "etcd-other.test.internal"
		dns.SetAddresses(cfg.Etcd.Alias, cluster.IPs()...)

		found, err := discover(cfg)

		Expect(certError(err).Problem).To(ContainSubstring(
			"the server certificate does not cover the alias 'etcd-other.test.internal' (its names: etcd.test.internal, member-"))
		Expect(found.certs).NotTo(BeEmpty())
		Expect(found.certs[0].CoversAlias).To(BeFalse())
	})

	It("says a certificate with only a common name covers no host name, as with cfcr-etcd v0.21", func() {
		legacy, err := etcdcluster.Start(ca, etcdcluster.Options{Size: 1, Domain: "legacy.test.internal",
			ServerCert: func(ca *pki.CA, m *etcdcluster.Member, _ string) (pki.Pair, error) {
				return ca.Issue(pki.Server(m.Name, nil, nil).CommonName("*.legacy.test.internal"))
			}})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(legacy.Close)
		legacy.Publish(dns)
		cfg := launcherConfig()
		cfg.Etcd.Alias, cfg.Etcd.Port = legacy.Alias, legacy.Port

		_, err = discover(cfg)

		Expect(certError(err).Problem).To(Equal("the server certificate does not cover the alias 'legacy.test.internal' " +
			"(its names: none; the common name '*.legacy.test.internal' is not used for host names)"))
	})

	It("says when the server certificate is not signed by the configured CA", func() {
		otherCA, err := pki.NewCA(GinkgoT().TempDir(), "other-ca")
		Expect(err).NotTo(HaveOccurred())
		cfg := launcherConfig()
		cfg.Etcd.CAFile = otherCA.CertFile

		_, err = discover(cfg)

		Expect(certError(err).Problem).To(Equal(
			"the server certificate (issued by 'CN=etcd-ca') is not signed by the CA in etcd.ca_file '" + otherCA.CertFile + "'"))
	})

	It("refuses an expired client certificate before connecting", func() {
		expired, err := ca.Issue(pki.Client("expired").ValidUntil(time.Now().Add(-time.Hour)))
		Expect(err).NotTo(HaveOccurred())
		cfg := launcherConfig()
		cfg.Etcd.CertFile, cfg.Etcd.KeyFile = expired.CertFile, expired.KeyFile

		_, err = discover(cfg)

		Expect(err).To(MatchError(HavePrefix("etcd.cert_file '%s': the client certificate expired at", expired.CertFile)))
	})

	It("says etcd refused a client certificate from another CA", func() {
		otherCA, err := pki.NewCA(GinkgoT().TempDir(), "other-ca")
		Expect(err).NotTo(HaveOccurred())
		stranger, err := otherCA.Issue(pki.Client("stranger"))
		Expect(err).NotTo(HaveOccurred())
		cfg := launcherConfig()
		cfg.Etcd.CertFile, cfg.Etcd.KeyFile = stranger.CertFile, stranger.KeyFile

		_, err = discover(cfg)

		Expect(certError(err).Problem).To(MatchRegexp(
			`the server refused the handshake \(tls: .*\); is etcd.cert_file '%s' signed by a CA that etcd trusts\?`, stranger.CertFile))
	})

	It("builds a TLS config that verifies the dialled name, TLS 1.2 or newer", func() {
		tlsConfig, err := members.TLSConfig(launcherConfig().Etcd, time.Now())

		Expect(err).NotTo(HaveOccurred())
		Expect(tlsConfig.MinVersion).To(BeNumerically(">=", tls.VersionTLS12))
		Expect(tlsConfig.InsecureSkipVerify).To(BeFalse())
		Expect(tlsConfig.ServerName).To(BeEmpty())
		Expect(tlsConfig.RootCAs).NotTo(BeNil())
		Expect(tlsConfig.Certificates).To(HaveLen(1))
	})
})

// startImpostor listens on a fresh loopback address at port with a certificate for name from a CA of its own.
func startImpostor(name string, port int) *impostor.Listener {
	addr := netip.AddrPortFrom(netip.MustParseAddr(loopback.IPs(1)[0].String()), uint16(port))
	listener, err := impostor.Start("", addr, []string{name}, GinkgoT().TempDir())
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(listener.Close)
	return listener
}
