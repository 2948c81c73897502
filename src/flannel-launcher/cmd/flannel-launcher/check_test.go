package main_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"net"
	"net/netip"
	"path/filepath"
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	"github.com/onsi/gomega/gexec"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/flannel-dns/flannel-dns/src/e2e/impostor"
	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/check"
	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/config"
	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/members"
	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/netconfig"
	"github.com/flannel-dns/flannel-dns/src/testenv/etcdcluster"
	"github.com/flannel-dns/flannel-dns/src/testenv/loopback"
	"github.com/flannel-dns/flannel-dns/src/testenv/pki"
)

var _ = Describe("flannel-launcher check", func() {
	var (
		cfg        config.Config
		recordFile string
	)

	checkCommand := func(args ...string) *gexec.Session {
		session := start(recordFile, nil, append([]string{"check", "--config", writeConfig(cfg)}, args...)...)
		Eventually(session, 10*time.Second).Should(gexec.Exit())
		Expect(recordFile).NotTo(BeAnExistingFile())
		return session
	}
	checkJSON := func() (check.Report, int) {
		session := checkCommand("--json")
		var report check.Report
		Expect(json.Unmarshal(session.Out.Contents(), &report)).To(Succeed())
		return report, session.ExitCode()
	}

	BeforeEach(func() {
		cfg = newConfig()
		recordFile = filepath.Join(GinkgoT().TempDir(), "record.json")
		DeferCleanup(cluster.Publish, dnsServer)
	})

	Context("with a healthy cluster", func() {
		It("prints the alias, the certificates, every member and the network config, and exits 0", func() {
			session := checkCommand()
			Expect(session).To(gexec.Exit(0))
			ips := cluster.IPs()
			Expect(session.Out).To(gbytes.Say(`ALIAS %s: %s, %s, %s\n`, cluster.Alias, ips[0], ips[1], ips[2]))
			Expect(session.Out).To(gbytes.Say(`SERVER CERTIFICATE AT +COVERS ALIAS +EXPIRES +ERROR\n`))
			for _, ip := range ips {
				Expect(session.Out).To(gbytes.Say(`%s:%d +yes +\d{4}-\d\d-\d\dT\S+Z +-\n`, ip, cluster.Port))
			}
			Expect(session.Out).To(gbytes.Say(`MEMBER +CLIENT URL +RESOLVES +HEALTHY +LEADER +VERSION +RTT +ERROR\n`))
			for _, m := range cluster.Members {
				Expect(session.Out).To(gbytes.Say(`%s +%s +yes +yes +(yes|no) +3\.6\.\d+ +\d+\.\dms +-\n`, m.Name, m.ClientURL))
			}
			Expect(session.Out).To(gbytes.Say(`NETWORK CONFIG %s: absent\n`, cfg.Etcd.NetworkConfigKey()))
			Expect(session.Out).To(gbytes.Say(`READY: yes`))
		})

		It("prints the same as JSON", func() {
			report, status := checkJSON()
			Expect(status).To(Equal(0))
			Expect(report.Ready).To(BeTrue())
			Expect(report.Problems).To(BeEmpty())
			Expect(report.Alias.Addresses).To(ConsistOf(cluster.IPs()[0].String(), cluster.IPs()[1].String(), cluster.IPs()[2].String()))
			Expect(report.ServerCerts).To(HaveLen(3))
			Expect(report.ServerCerts).To(HaveEach(HaveField("CoversAlias", BeTrue())))
			Expect(report.ServerCerts[0].NotAfter).To(BeTemporally("~", time.Now().Add(24*time.Hour), time.Hour))
			Expect(report.Members).To(HaveLen(3))
			Expect(report.Members).To(HaveEach(SatisfyAll(HaveField("Healthy", BeTrue()), HaveField("Resolves", BeTrue()))))
			Expect(report.Members).To(ContainElement(HaveField("Leader", BeTrue())))
			Expect(report.NetworkConfig.State).To(Equal("absent"))
			Expect(report.NetworkConfig.Desired).To(MatchJSON(cfg.Network.Desired()))
		})

		It("reports a stored network config equal to the desired one", func() {
			putNetworkConfig(cfg, string(cfg.Network.Desired()))
			report, status := checkJSON()
			Expect(status).To(Equal(0))
			Expect(report.NetworkConfig.State).To(Equal("equal"))
		})
	})

	It("shows a stopped member and one whose name does not resolve here, and is still ready", func() {
		cluster.Stop(1)
		DeferCleanup(func() { Expect(cluster.Restart(1)).To(Succeed()) })
		dnsServer.Remove(cluster.Members[2].Host)
		dnsServer.SetAddresses(cluster.Alias, cluster.Members[0].IP, cluster.Members[2].IP)

		session := checkCommand()
		Expect(session).To(gexec.Exit(0))
		Expect(session.Out).To(gbytes.Say(`%s +%s +yes +yes +(yes|no) +3\.6\.\d+ +\d+\.\dms +-\n`, cluster.Members[0].Name, cluster.Members[0].ClientURL))
		Expect(session.Out).To(gbytes.Say(`%s +%s +yes +no +no +- +- +.*connection refused`, cluster.Members[1].Name, cluster.Members[1].ClientURL))
		Expect(session.Out).To(gbytes.Say(`%s +%s +no +no +no +- +- +.*NXDOMAIN`, cluster.Members[2].Name, cluster.Members[2].ClientURL))
		Expect(session.Out).To(gbytes.Say(`READY: yes`))
	})

	It("exits 1 when the alias does not resolve", func() {
		dnsServer.Remove(cluster.Alias)
		session := checkCommand()
		Expect(session).To(gexec.Exit(1))
		Expect(session.Out).To(gbytes.Say(`ALIAS %s: looking up '%s' at %s: NXDOMAIN`, cluster.Alias, cluster.Alias, dnsServer.Addr))
		Expect(session.Out).To(gbytes.Say(`READY: no\n  - looking up '%s'`, cluster.Alias))
	})

	It("exits 1 when the server certificate does not cover the alias", func() {
		cfg.Etcd.Alias = "other.test.internal"
		dnsServer.SetAddresses(cfg.Etcd.Alias, cluster.IPs()...)
		session := checkCommand()
		Expect(session).To(gexec.Exit(1))
		Expect(session.Out).To(gbytes.Say(`%s:%d +no +\d{4}\S+Z +TLS handshake with etcd at \S+: the server certificate does not cover the alias 'other.test.internal'`,
			cluster.IPs()[0], cluster.Port))
		Expect(session.Out).To(gbytes.Say(`READY: no\n  - TLS handshake .* does not cover the alias 'other.test.internal' \(its names: etcd.test.internal, member-\d.etcd.test.internal, 127`))
	})

	It("exits 1 naming an alias address whose certificate another CA signed, and still lists every member", func() {
		addr := netip.AddrPortFrom(netip.MustParseAddr(loopback.IPs(1)[0].String()), uint16(cluster.Port))
		stranger, err := impostor.Start("", addr, []string{cluster.Alias}, GinkgoT().TempDir())
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(stranger.Close)
		dnsServer.SetAddresses(cluster.Alias, append(cluster.IPs(), addr.Addr().AsSlice())...)

		session := checkCommand()
		Expect(session).To(gexec.Exit(1))
		Expect(session.Out).To(gbytes.Say(`%s +yes +\S+ +TLS handshake with etcd at %[1]s: the server certificate \(issued by 'CN=impostor-ca'\) is not signed`, addr))
		Expect(session.Out).To(gbytes.Say(`%s +%s +yes +yes`, cluster.Members[0].Name, cluster.Members[0].ClientURL))
		Expect(session.Out).To(gbytes.Say(`READY: no\n  - TLS handshake with etcd at %s: the server certificate \(issued by 'CN=impostor-ca'\)`, addr))
		Expect(stranger.Handshakes()).To(BeZero())
	})

	It("says 'not ready' within its request timeout when the alias leads to a TLS server that is not etcd", func() {
		impostor, err := ca.Issue(pki.Server("impostor", []string{cluster.Alias}, nil))
		Expect(err).NotTo(HaveOccurred())
		cert, err := tls.LoadX509KeyPair(impostor.CertFile, impostor.KeyFile)
		Expect(err).NotTo(HaveOccurred())
		// It completes the handshake (same CA, covers the alias, speaks h2) and then never answers.
		listener, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"h2"}})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(listener.Close)
		go func() {
			for {
				conn, err := listener.Accept()
				if err != nil {
					return
				}
				go func() { _, _ = io.Copy(io.Discard, conn) }()
			}
		}()
		cfg.Etcd.Port = listener.Addr().(*net.TCPAddr).Port
		dnsServer.SetAddresses(cluster.Alias, net.ParseIP("127.0.0.1"))

		session := checkCommand() // which allows it 10 s, twice members.RequestTimeout
		Expect(session).To(gexec.Exit(1))
		Expect(session.Out).To(gbytes.Say(`127\.0\.0\.1:%d +yes`, cfg.Etcd.Port))
		Expect(session.Out).To(gbytes.Say(`READY: no\n  - Listing etcd members through`))
	})

	// `run` starts flanneld then, on the stored config, so `check` must say it could start.
	It("exits 0 when the stored network config differs and network.enforce is false, with a warning", func() {
		putNetworkConfig(cfg, `{"Network":"198.18.0.0/16","SubnetLen":24,"Backend":{"Type":"udp"}}`)
		session := checkCommand()
		Expect(session).To(gexec.Exit(0))
		Expect(session.Out).To(gbytes.Say(`NETWORK CONFIG %s: different\n`, cfg.Etcd.NetworkConfigKey()))
		Expect(session.Out).To(gbytes.Say(`  differs: Backend.Type: stored "udp", desired "vxlan"\n`))
		Expect(session.Out).To(gbytes.Say(`READY: yes, flanneld could start now\nWARNING: the network config at '%s' differs from the desired one; `+
			`flanneld would run on the stored one \(network.enforce is false\)\n`, cfg.Etcd.NetworkConfigKey()))
		report, status := checkJSON()
		Expect(status).To(Equal(0))
		Expect(report.Problems).To(BeEmpty())
		Expect(report.Warnings).To(ConsistOf(ContainSubstring("differs from the desired one")))
	})

	It("is ready with a different network config when network.enforce would replace it", func() {
		putNetworkConfig(cfg, `{"Network":"198.18.0.0/16","SubnetLen":24,"Backend":{"Type":"udp"}}`)
		cfg.Network.Enforce = true
		cfg.Network.EnforceRecord = filepath.Join(GinkgoT().TempDir(), "network-config.enforced")
		report, status := checkJSON()
		Expect(status).To(Equal(0))
		Expect(report.NetworkConfig.State).To(Equal("different"))
		Expect(report.Warnings).To(BeEmpty())
	})

	// A node not yet updated while a roll changes the network config, once the first updated node replaced it.
	It("warns that flanneld would run on a different stored config when this node enforced its own before", func() {
		putNetworkConfig(cfg, `{"Network":"198.18.0.0/15","SubnetLen":24,"Backend":{"Type":"vxlan"}}`)
		cfg.Network.Enforce = true
		record := netconfig.Record{Path: filepath.Join(GinkgoT().TempDir(), "network-config.enforced")}
		Expect(record.Save(cfg.Etcd.NetworkConfigKey(), cfg.Network.Desired())).To(Succeed())
		cfg.Network.EnforceRecord = record.Path

		session := checkCommand()
		Expect(session).To(gexec.Exit(0))
		Expect(session.Out).To(gbytes.Say(`READY: yes, flanneld could start now\nWARNING: the network config at '%s' differs from the desired one; `+
			`flanneld would run on the stored one: this node enforced its desired config before, so the stored one is taken as newer`,
			cfg.Etcd.NetworkConfigKey()))
	})

	// check prints to an operator's root terminal what etcd holds: the stored config and the members' names.
	Context("with control characters in the stored config and a member's name", func() {
		const name = "evil\x1b]0;owned\x07\x1b[2J\u009b31m\x7f\n\tREADY: yes"
		var stored string

		BeforeEach(func() {
			odd, err := etcdcluster.Start(ca, etcdcluster.Options{Size: 1, Domain: "odd.test.internal",
				Name: func(int) string { return name }})
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(odd.Close)
			odd.Publish(dnsServer)
			cfg.Etcd.Alias, cfg.Etcd.Port = odd.Alias, odd.Port
			// valid JSON (C1 controls need no escape in a JSON string) whose differences show the value again
			stored = "{\"Network\":\"198.18.0.0/16\",\"SubnetLen\":24,\"Backend\":{\"Type\":\"vxlan\u009b2J\x7f\"}}"
			withEtcdOf(odd, cfg, func(ctx context.Context, etcd *clientv3.Client) {
				_, err := etcd.Put(ctx, cfg.Etcd.NetworkConfigKey(), stored)
				Expect(err).NotTo(HaveOccurred())
			})
		})

		It("escapes them in the table", func() {
			session := checkCommand()
			Expect(session).To(gexec.Exit(0))
			out := string(session.Out.Contents())
			for _, r := range out {
				Expect(r == '\n' || strconv.IsPrint(r)).To(BeTrue(), "%q in the output:\n%s", r, out)
			}
			Expect(out).To(ContainSubstring(`evil\x1b]0;owned\a\x1b[2J\u009b31m\x7f\n\tREADY: yes  https://member-0.odd.test.internal:`))
			Expect(out).To(ContainSubstring(`stored:  {"Network":"198.18.0.0/16","SubnetLen":24,"Backend":{"Type":"vxlan\u009b2J\x7f"}}`))
			Expect(out).To(ContainSubstring(`differs: Backend.Type: stored "vxlan\u009b2J\x7f", desired "vxlan"`))
		})

		It("escapes them in the JSON, which still decodes to what etcd holds", func() {
			session := checkCommand("--json")
			Expect(session).To(gexec.Exit(0))
			for _, r := range string(session.Out.Contents()) {
				Expect(r == '\n' || strconv.IsPrint(r)).To(BeTrue(), "%q in the output:\n%s", r, session.Out.Contents())
			}
			var report check.Report
			Expect(json.Unmarshal(session.Out.Contents(), &report)).To(Succeed())
			Expect(report.Members).To(ConsistOf(HaveField("Name", name)))
			Expect(report.NetworkConfig.Existing).To(Equal(stored))
		})
	})

	It("exits 2 on a bad config", func() {
		cfg.Etcd.Port = 0
		session := checkCommand()
		Expect(session).To(gexec.Exit(2))
		Expect(session.Err).To(gbytes.Say(`invalid config: etcd.port: must be a port between 1 and 65535, got 0`))
	})
})

func putNetworkConfig(cfg config.Config, value string) {
	withEtcd(cfg, func(ctx context.Context, etcd *clientv3.Client) {
		_, err := etcd.Put(ctx, cfg.Etcd.NetworkConfigKey(), value)
		Expect(err).NotTo(HaveOccurred())
	})
}

func storedNetworkConfig(cfg config.Config) (value string) {
	withEtcd(cfg, func(ctx context.Context, etcd *clientv3.Client) {
		resp, err := etcd.Get(ctx, cfg.Etcd.NetworkConfigKey())
		Expect(err).NotTo(HaveOccurred())
		Expect(resp.Kvs).To(HaveLen(1))
		value = string(resp.Kvs[0].Value)
	})
	return value
}

// withEtcd gives do a client of the suite cluster's first member, with cfg's TLS files.
func withEtcd(cfg config.Config, do func(ctx context.Context, etcd *clientv3.Client)) {
	withEtcdOf(cluster, cfg, do)
}

func withEtcdOf(c *etcdcluster.Cluster, cfg config.Config, do func(ctx context.Context, etcd *clientv3.Client)) {
	tlsConfig, err := members.TLSConfig(cfg.Etcd, time.Now())
	Expect(err).NotTo(HaveOccurred())
	endpoint := "https://" + net.JoinHostPort(c.Members[0].IP.String(), strconv.Itoa(c.Port))
	etcd, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, TLS: tlsConfig, DialTimeout: 5 * time.Second})
	Expect(err).NotTo(HaveOccurred())
	defer etcd.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	do(ctx, etcd)
}
