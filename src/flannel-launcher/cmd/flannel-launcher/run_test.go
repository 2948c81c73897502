package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	"github.com/onsi/gomega/gexec"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/config"
	"github.com/flannel-dns/flannel-dns/src/testenv/recordingflanneld/record"
)

var _ = Describe("flannel-launcher run", func() {
	var (
		cfg        config.Config
		recordFile string
	)

	recorded := func() record.Record {
		rec, err := record.Read(recordFile)
		Expect(err).NotTo(HaveOccurred())
		return rec
	}
	run := func(env ...string) *gexec.Session {
		return start(recordFile, env, "run", "--config", writeConfig(cfg))
	}
	startedFlanneld := func() { Eventually(recordFile, 10*time.Second).Should(BeAnExistingFile()) }

	BeforeEach(func() {
		cfg = newConfig()
		recordFile = filepath.Join(GinkgoT().TempDir(), "record.json")
		DeferCleanup(cluster.Publish, dnsServer)
	})

	It("starts flanneld with the alias first, the healthy members, TLS files, prefix and options", func() {
		session := run()
		startedFlanneld()

		Expect(recorded().Args).To(Equal([]string{
			"-etcd-endpoints=" + strings.Join([]string{cfg.AliasURL(), cluster.Members[0].ClientURL,
				cluster.Members[1].ClientURL, cluster.Members[2].ClientURL}, ","),
			"-etcd-prefix=" + cfg.Etcd.Prefix,
			"-etcd-cafile=" + ca.CertFile,
			"-etcd-certfile=" + client.CertFile,
			"-etcd-keyfile=" + client.KeyFile,
			"-iface=lo",
			"-public-ip=192.0.2.10",
			"-ip-masq",
			"-subnet-file=/var/vcap/sys/run/flanneld/test.env",
		}))
		Expect(session.Err).To(gbytes.Say(`\[flannel-launcher\] \S+ INFO - starting: version=` + testVersion))
		Expect(session.Err).To(gbytes.Say(`\[flanneld\] \S+ INFO - flanneld started: pid=\d+`))
		Expect(session).NotTo(gexec.Exit())
	})

	It("passes SIGTERM on to flanneld and exits with flanneld's status", func() {
		session := run(record.SignalExitEnv + "=3")
		startedFlanneld()
		session.Signal(syscall.SIGTERM)

		Eventually(session, 5*time.Second).Should(gexec.Exit(3))
		Expect(recorded().Signals).To(Equal([]string{"terminated"}))
		Expect(session.Err).To(gbytes.Say(`forwarding signal: signal=terminated`))
	})

	It("has flanneld told to stop when the launcher is killed outright", func() {
		session := run()
		startedFlanneld()
		session.Kill()

		Eventually(func() []string { return recorded().Signals }).Should(Equal([]string{"terminated"}))
		Eventually(session).Should(gexec.Exit())
	})

	It("exits 1 when flanneld exits 1", func() {
		session := run(record.ExitEnv + "=1")
		Eventually(session, 10*time.Second).Should(gexec.Exit(1))
		Expect(recordFile).To(BeAnExistingFile())
		Expect(session.Err).To(gbytes.Say(`flanneld exited: pid=\d+ status=1`))
	})

	It("waits while the alias is NXDOMAIN and starts flanneld once it appears", func() {
		dnsServer.Remove(cluster.Alias)
		session := run()
		Eventually(session.Err).Should(gbytes.Say(`Attempt 2: looking up '%s' at %s: NXDOMAIN`, cluster.Alias, dnsServer.Addr))
		Expect(recordFile).NotTo(BeAnExistingFile())

		cluster.Publish(dnsServer)
		startedFlanneld()
		endpoints, _ := recorded().Flag("etcd-endpoints")
		Expect(endpoints).To(HavePrefix(cfg.AliasURL() + ","))
	})

	It("leaves a stopped member out", func() {
		cluster.Stop(2)
		DeferCleanup(func() { Expect(cluster.Restart(2)).To(Succeed()) })
		run()
		startedFlanneld()

		endpoints, _ := recorded().Flag("etcd-endpoints")
		Expect(strings.Split(endpoints, ",")).To(Equal([]string{
			cfg.AliasURL(), cluster.Members[0].ClientURL, cluster.Members[1].ClientURL,
		}))
	})

	It("exits 1 with what it tried when the startup deadline passes", func() {
		dnsServer.Remove(cluster.Alias)
		cfg.Timing.StartupDeadline = config.Duration(300 * time.Millisecond)
		session := run()

		Eventually(session, 5*time.Second).Should(gexec.Exit(1))
		Expect(session.Err).To(gbytes.Say(`ERROR - giving up on resolving the alias: no address for '%s' from %s after \d+ attempts`,
			cluster.Alias, dnsServer.Addr))
		Expect(recordFile).NotTo(BeAnExistingFile())
	})

	// The node restarts while a roll changes the network config: the first start replaces the config that a node
	// not yet updated wrote back (as this launcher did on every start until fixed); the second leaves the stored
	// config alone, as this node enforced its desired one before.
	It("with network.enforce, replaces a different stored config once per change of the desired one", func() {
		other := `{"Network":"198.18.0.0/15","SubnetLen":24,"Backend":{"Type":"vxlan"}}`
		putNetworkConfig(cfg, other)
		cfg.Network.Enforce = true
		cfg.Network.EnforceRecord = filepath.Join(GinkgoT().TempDir(), "network-config.enforced")

		session := run()
		startedFlanneld()
		Expect(session.Err).To(gbytes.Say(`WARN - Replaced the network config at '%s'`, cfg.Etcd.NetworkConfigKey()))
		Expect(storedNetworkConfig(cfg)).To(MatchJSON(cfg.Network.Desired()))
		stopAll(session, recordFile)

		putNetworkConfig(cfg, other)
		Expect(os.Remove(recordFile)).To(Succeed())
		session = run()
		startedFlanneld()
		Expect(session.Err).To(gbytes.Say(`WARN - The network config at '%s' differs from the desired one and is left as it is: `+
			`this node enforced its desired config before`, cfg.Etcd.NetworkConfigKey()))
		Expect(storedNetworkConfig(cfg)).To(Equal(other))
	})

	DescribeTable("exits 2 on a bad config, naming the key in one line, without starting flanneld",
		func(change func(config map[string]map[string]any), line string) {
			var raw map[string]map[string]any
			data, err := json.Marshal(cfg)
			Expect(err).NotTo(HaveOccurred())
			Expect(json.Unmarshal(data, &raw)).To(Succeed())
			change(raw)
			data, err = json.Marshal(raw)
			Expect(err).NotTo(HaveOccurred())

			session := start(recordFile, nil, "run", "--config", writeConfigJSON(data))
			Eventually(session, 5*time.Second).Should(gexec.Exit(2))
			Expect(session.Err).To(gbytes.Say(`ERROR - invalid config: ` + line + `\n`))
			Expect(strings.Count(string(session.Err.Contents()), "invalid config")).To(Equal(1))
			Expect(recordFile).NotTo(BeAnExistingFile())
		},
		Entry("unknown key", func(c map[string]map[string]any) { c["etcd"]["endpoints"] = "https://192.0.2.1:2379" },
			`etcd.endpoints: unknown key`),
		Entry("missing alias", func(c map[string]map[string]any) { c["etcd"]["alias"] = "" },
			`etcd.alias: is required .*`),
		Entry("bad port", func(c map[string]map[string]any) { c["etcd"]["port"] = 70000 },
			`etcd.port: must be a port between 1 and 65535, got 70000`),
		Entry("port of the wrong type", func(c map[string]map[string]any) { c["etcd"]["port"] = "2379" },
			`etcd.port: must be a whole number, got "2379"`),
		Entry("network that is not a CIDR", func(c map[string]map[string]any) { c["network"]["cidr"] = "198.18.0.0" },
			`network.cidr: must be an IPv4 CIDR such as '10.200.0.0/16', got '198.18.0.0'`),
		Entry("bad duration", func(c map[string]map[string]any) { c["timing"]["probe_timeout"] = "soon" },
			`timing.probe_timeout: .*'soon'`),
		Entry("missing CA file", func(c map[string]map[string]any) { c["etcd"]["ca_file"] = "/nonexistent/ca.crt" },
			`etcd.ca_file: cannot read '/nonexistent/ca.crt': .*`),
		Entry("network.enforce without a record file", func(c map[string]map[string]any) { c["network"]["enforce"] = true },
			`network.enforce_record: is required when network.enforce is true .*`),
		Entry("key file readable by others", func(c map[string]map[string]any) { c["etcd"]["key_file"] = openKeyFile() },
			`etcd.key_file: '.*' is readable by others \(mode 0644\); it must not be .*`),
	)
})

// openKeyFile copies the client key to a file that others may read.
func openKeyFile() string {
	data, err := os.ReadFile(client.KeyFile)
	Expect(err).NotTo(HaveOccurred())
	path := filepath.Join(GinkgoT().TempDir(), "open.key")
	Expect(os.WriteFile(path, data, 0o600)).To(Succeed())
	Expect(os.Chmod(path, 0o644)).To(Succeed())
	return path
}
