package config_test

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/config"
)

// validJSON is what the job template renders with its defaults; each case below breaks one thing.
func validJSON(dir string) map[string]any {
	return map[string]any{
		"etcd": map[string]any{
			"alias": "etcd.cfcr.internal", "port": 2379, "prefix": "/coreos.com/network",
			"ca_file": filepath.Join(dir, "ca.crt"), "cert_file": filepath.Join(dir, "client.crt"), "key_file": filepath.Join(dir, "client.key"),
		},
		"network": map[string]any{"cidr": "10.200.0.0/16", "backend_type": "vxlan", "vni": 1},
		"timing":  map[string]any{"startup_deadline": "2m", "probe_timeout": "500ms"},
	}
}

func writeJSON(path string, value any) {
	data, err := json.Marshal(value)
	Expect(err).NotTo(HaveOccurred())
	Expect(os.WriteFile(path, data, 0o640)).To(Succeed())
}

func writePEM(path, kind string, der []byte, mode os.FileMode) {
	Expect(os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), mode)).To(Succeed())
	Expect(os.Chmod(path, mode)).To(Succeed())
}

// writeKeyPair writes a self-signed certificate and its key, P-256; the config loader checks that they pair up
// and that Go's TLS can sign with the key.
func writeKeyPair(certPath, keyPath string) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	Expect(err).NotTo(HaveOccurred())
	writeKeyPairWith(certPath, keyPath, key)
}

func writeKeyPairWith(certPath, keyPath string, key crypto.Signer) {
	template := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "flanneld"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, template, template, key.Public(), key)
	Expect(err).NotTo(HaveOccurred())
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	Expect(err).NotTo(HaveOccurred())
	writePEM(certPath, "CERTIFICATE", der, 0o644)
	writePEM(keyPath, "PRIVATE KEY", keyDER, 0o600)
}

func set(doc map[string]any, dotted string, value any) {
	parts := strings.Split(dotted, ".")
	section := doc
	for _, part := range parts[:len(parts)-1] {
		if _, ok := section[part]; !ok {
			section[part] = map[string]any{}
		}
		section = section[part].(map[string]any)
	}
	section[parts[len(parts)-1]] = value
}

// asNobody is the user to load a config as so that file modes apply: nobody (65534) when running as root,
// nil (this process's user) otherwise.
func asNobody() *syscall.Credential {
	if os.Geteuid() != 0 {
		return nil
	}
	return &syscall.Credential{Uid: 65534, Gid: 65534}
}

// nobodysDir is a directory that nobody can enter, removed when the spec ends (GinkgoT().TempDir's parents are
// private to root).
func nobodysDir() string {
	dir, err := os.MkdirTemp("", "config-test-")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(os.RemoveAll, dir)
	return dir
}

// giveAway hands dir and everything in it to user (nil: keep them).
func giveAway(dir string, user *syscall.Credential) {
	if user == nil {
		return
	}
	entries, err := os.ReadDir(dir)
	Expect(err).NotTo(HaveOccurred())
	for _, entry := range entries {
		Expect(os.Chown(filepath.Join(dir, entry.Name()), int(user.Uid), int(user.Gid))).To(Succeed())
	}
	Expect(os.Chown(dir, int(user.Uid), int(user.Gid))).To(Succeed())
}

func problemsOf(err error) []string {
	var invalid *config.InvalidError
	Expect(err).To(BeAssignableToTypeOf(invalid))
	return err.(*config.InvalidError).Problems
}

var _ = Describe("Load", func() {
	var dir, path string
	var doc map[string]any

	BeforeEach(func() {
		dir = GinkgoT().TempDir()
		path = filepath.Join(dir, "launcher.json")
		writeKeyPair(filepath.Join(dir, "client.crt"), filepath.Join(dir, "client.key"))
		writeKeyPair(filepath.Join(dir, "ca.crt"), filepath.Join(dir, "ca.key"))
		doc = validJSON(dir)
	})

	load := func() (config.Config, error) {
		writeJSON(path, doc)
		return config.Load(path)
	}

	It("fills what the file leaves out with the defaults", func() {
		cfg, err := load()
		Expect(err).NotTo(HaveOccurred())
		Expect(cfg.Etcd.Alias).To(Equal("etcd.cfcr.internal"))
		Expect(cfg.Timing.StartupDeadline.D()).To(Equal(2 * time.Minute))
		Expect(cfg.Timing.ProbeTimeout.D()).To(Equal(500 * time.Millisecond))
		Expect(cfg.Timing.ResolveInterval).To(Equal(config.Default().Timing.ResolveInterval))
		Expect(cfg.DNS.ResolvConf).To(Equal("/etc/resolv.conf"))
		Expect(cfg.Flanneld.IPMasq).To(BeTrue())
		Expect(cfg.Network.SubnetLen).To(Equal(24))
	})

	It("derives the alias URL and the network config key", func() {
		set(doc, "etcd.port", 4001)
		set(doc, "etcd.prefix", "/kubo/network")
		cfg, err := load()
		Expect(err).NotTo(HaveOccurred())
		Expect(cfg.AliasURL()).To(Equal("https://etcd.cfcr.internal:4001"))
		Expect(cfg.Etcd.NetworkConfigKey()).To(Equal("/kubo/network/config"))
	})

	It("renders the network config flanneld reads, always with a backend type", func() {
		cfg, err := load()
		Expect(err).NotTo(HaveOccurred())
		Expect(cfg.Network.Desired()).To(MatchJSON(`{"Network":"10.200.0.0/16","SubnetLen":24,"Backend":{"Type":"vxlan","VNI":1}}`))
		cfg.Network.BackendType, cfg.Network.VNI, cfg.Network.Port = "host-gw", 0, 0
		Expect(cfg.Network.Desired()).To(MatchJSON(`{"Network":"10.200.0.0/16","SubnetLen":24,"Backend":{"Type":"host-gw"}}`))
	})

	It("names the file it cannot read", func() {
		_, err := config.Load(filepath.Join(dir, "missing.json"))
		Expect(err).To(MatchError(ContainSubstring("missing.json")))
	})

	DescribeTable("reports a bad value in one line naming the key and quoting the value",
		func(key string, value any, expected string) {
			set(doc, key, value)
			_, err := load()
			Expect(problemsOf(err)).To(ConsistOf(expected))
		},
		Entry("unknown top-level key", "etcd_alias", "x", "etcd_alias: unknown key"),
		Entry("unknown nested key", "etcd.aliass", "x", "etcd.aliass: unknown key"),
		Entry("missing alias", "etcd.alias", "", "etcd.alias: is required (the bosh-dns alias of the etcd cluster, e.g. 'etcd.cfcr.internal')"),
		Entry("alias that is not a name", "etcd.alias", "etcd..internal", "etcd.alias: must be a DNS name, got 'etcd..internal'"),
		Entry("alias that is an address", "etcd.alias", "192.0.2.10", "etcd.alias: must be a DNS name, got '192.0.2.10'"),
		Entry("port zero", "etcd.port", 0, "etcd.port: must be a port between 1 and 65535, got 0"),
		Entry("port too large", "etcd.port", 70000, "etcd.port: must be a port between 1 and 65535, got 70000"),
		Entry("port as a string", "etcd.port", "2379", `etcd.port: must be a whole number, got "2379"`),
		Entry("relative prefix", "etcd.prefix", "coreos.com/network", "etcd.prefix: must be a key path such as '/coreos.com/network', got 'coreos.com/network'"),
		Entry("relative CA path", "etcd.ca_file", "ca.crt", "etcd.ca_file: must be an absolute path, got 'ca.crt'"),
		// '..' would lead flanneld out of the directory bpm lets it write to.
		Entry("subnet file that climbs out of its directory", "flanneld.subnet_file", "/var/vcap/sys/run/flanneld/../x",
			"flanneld.subnet_file: must be a clean absolute path (no '.' or '..' parts, no '//', no trailing '/'), got '/var/vcap/sys/run/flanneld/../x'"),
		Entry("subnet file that is a directory", "flanneld.subnet_file", "/var/vcap/sys/run/flanneld/",
			"flanneld.subnet_file: must be a clean absolute path (no '.' or '..' parts, no '//', no trailing '/'), got '/var/vcap/sys/run/flanneld/'"),
		Entry("published subnet file that climbs out of its directory", "flanneld.published_subnet_file", "/run/flannel/../x",
			"flanneld.published_subnet_file: must be a clean absolute path (no '.' or '..' parts, no '//', no trailing '/'), got '/run/flannel/../x'"),
		Entry("published subnet file that is relative", "flanneld.published_subnet_file", "subnet.env",
			"flanneld.published_subnet_file: must be an absolute path, got 'subnet.env'"),
		// flanneld's user can write there: docker's job would source what it wrote.
		Entry("published subnet file beside flanneld's", "flanneld.published_subnet_file", "/var/vcap/sys/run/flanneld/docker.env",
			"flanneld.published_subnet_file: must be outside the directory of flanneld.subnet_file ('/var/vcap/sys/run/flanneld'), got '/var/vcap/sys/run/flanneld/docker.env'"),
		Entry("flanneld path with a '.' part", "flanneld.path", "/var/vcap/packages/flannel/./bin/flanneld",
			"flanneld.path: must be a clean absolute path (no '.' or '..' parts, no '//', no trailing '/'), got '/var/vcap/packages/flannel/./bin/flanneld'"),
		Entry("DNS server without a port", "dns.server", "127.0.0.1", "dns.server: must be an IP address and port such as '169.254.0.2:53', got '127.0.0.1'"),
		Entry("network that is not a CIDR", "network.cidr", "10.200.0.0", "network.cidr: must be an IPv4 CIDR such as '10.200.0.0/16', got '10.200.0.0'"),
		Entry("network with host bits", "network.cidr", "10.200.1.0/16", "network.cidr: '10.200.1.0/16' has host bits set; did you mean '10.200.0.0/16'?"),
		Entry("subnets larger than the network", "network.subnet_len", 16, "network.subnet_len: must be longer than the network's /16 and at most 30, got 16"),
		Entry("unknown backend", "network.backend_type", "vxlam", "network.backend_type: must be one of vxlan, host-gw, udp, wireguard, ipip, ipsec, alloc, got 'vxlam'"),
		Entry("VNI out of range", "network.vni", 1<<24, "network.vni: must be between 1 and 16777215, got 16777216"),
		Entry("backend port out of range", "network.port", -1, "network.port: must be a port between 1 and 65535, got -1"),
		Entry("relative enforce record", "network.enforce_record", "network-config.enforced",
			"network.enforce_record: must be an absolute path, got 'network-config.enforced'"),
		Entry("bad public IP", "flanneld.public_ip", "192.0.2", "flanneld.public_ip: must be an IPv4 address (flanneld leases an IPv4 subnet for it), got '192.0.2'"),
		// flanneld's IPv4 lease path panicked on these, and monit restarted it without end.
		Entry("IPv6 public IP", "flanneld.public_ip", "2001:db8::1", "flanneld.public_ip: must be an IPv4 address (flanneld leases an IPv4 subnet for it), got '2001:db8::1'"),
		Entry("public IP with a zone", "flanneld.public_ip", "fe80::1%eth0", "flanneld.public_ip: must be an IPv4 address (flanneld leases an IPv4 subnet for it), got 'fe80::1%eth0'"),
		Entry("public IP as IPv4 in IPv6", "flanneld.public_ip", "::ffff:192.0.2.7", "flanneld.public_ip: must be an IPv4 address (flanneld leases an IPv4 subnet for it), got '::ffff:192.0.2.7'"),
		Entry("DNS server on port 0", "dns.server", "169.254.0.2:0", "dns.server: must be an IP address and port such as '169.254.0.2:53', got '169.254.0.2:0'"),
		Entry("DNS server with a zone", "dns.server", "[fe80::1%eth0]:53", "dns.server: must be an IP address and port such as '169.254.0.2:53', got '[fe80::1%eth0]:53'"),
		Entry("prefix that is only a slash", "etcd.prefix", "/", "etcd.prefix: must be a key path such as '/coreos.com/network', got '/'"),
		Entry("prefix with an empty part", "etcd.prefix", "/coreos.com//network", "etcd.prefix: must be a key path such as '/coreos.com/network', got '/coreos.com//network'"),
		// flanneld gets these as arguments, and the paths name files: with a NUL every exec of flanneld fails, and
		// monit restarts it for ever. The value is quoted with Go's escapes, so that each problem is one line.
		Entry("prefix with a carriage return", "etcd.prefix", "/coreos.com\r/network", `etcd.prefix: must not hold control characters (U+0000 to U+001F, U+007F to U+009F), got '/coreos.com\r/network'`),
		Entry("prefix with a NUL", "etcd.prefix", "/coreos.com\x00/network", `etcd.prefix: must not hold control characters (U+0000 to U+001F, U+007F to U+009F), got '/coreos.com\x00/network'`),
		Entry("prefix with ESC", "etcd.prefix", "/coreos.com/\x1b[2Jnetwork", `etcd.prefix: must not hold control characters (U+0000 to U+001F, U+007F to U+009F), got '/coreos.com/\x1b[2Jnetwork'`),
		Entry("prefix with DEL", "etcd.prefix", "/coreos.com/network\x7f", `etcd.prefix: must not hold control characters (U+0000 to U+001F, U+007F to U+009F), got '/coreos.com/network\x7f'`),
		Entry("prefix with a C1 control", "etcd.prefix", "/coreos.com/\u0085network", `etcd.prefix: must not hold control characters (U+0000 to U+001F, U+007F to U+009F), got '/coreos.com/\u0085network'`),
		Entry("interface with a NUL", "flanneld.iface", "eth0\x00", `flanneld.iface: must not hold control characters (U+0000 to U+001F, U+007F to U+009F), got 'eth0\x00'`),
		Entry("interface with a bell", "flanneld.iface", "et\ah0", `flanneld.iface: must not hold control characters (U+0000 to U+001F, U+007F to U+009F), got 'et\ah0'`),
		Entry("interface with a C1 control", "flanneld.iface", "eth\u009b0", `flanneld.iface: must not hold control characters (U+0000 to U+001F, U+007F to U+009F), got 'eth\u009b0'`),
		Entry("flanneld path with a NUL", "flanneld.path", "/var/vcap/packages/flannel/bin/flanneld\x00", `flanneld.path: must not hold control characters (U+0000 to U+001F, U+007F to U+009F), got '/var/vcap/packages/flannel/bin/flanneld\x00'`),
		Entry("published subnet file with a newline", "flanneld.published_subnet_file", "/run/flannel/subnet.env\nx", `flanneld.published_subnet_file: must not hold control characters (U+0000 to U+001F, U+007F to U+009F), got '/run/flannel/subnet.env\nx'`),
		Entry("alias with a newline, quoted on one line", "etcd.alias", "etcd\n.cfcr.internal", `etcd.alias: must be a DNS name, got 'etcd\n.cfcr.internal'`),
		// Go's case-insensitive [a-z] takes these two for s and k.
		Entry("alias with a long s", "etcd.alias", "etcd.cfcr.internal\u017f", "etcd.alias: must be a DNS name, got 'etcd.cfcr.internal\u017f'"),
		Entry("alias with a Kelvin sign", "etcd.alias", "\u212aubo.internal", "etcd.alias: must be a DNS name, got '\u212aubo.internal'"),
		Entry("interface with a vertical tab", "flanneld.iface", "eth0\v", `flanneld.iface: must not hold control characters (U+0000 to U+001F, U+007F to U+009F), got 'eth0\v'`),
		Entry("two interfaces", "flanneld.iface", "eth0,eth1", "flanneld.iface: must be one interface name or address, got 'eth0,eth1'"),
		Entry("ip_masq as a string", "flanneld.ip_masq", "yes", `flanneld.ip_masq: must be true or false, got "yes"`),
		Entry("duration without a unit", "timing.probe_timeout", "5", `timing.probe_timeout: must be a duration such as "5s", got '5'`),
		Entry("duration as a number", "timing.probe_timeout", 5, `timing.probe_timeout: must be a duration string such as "5s", got '5'`),
		Entry("negative duration", "timing.resolve_interval", "-1s", "timing.resolve_interval: must be longer than zero, got '-1s'"),
		Entry("section that is not an object", "timing", "5s", `timing: must be a JSON object, got "5s"`),
	)

	It("reports every problem at once", func() {
		set(doc, "etcd.alias", "")
		set(doc, "etcd.port", 0)
		set(doc, "network.cidr", "nope")
		set(doc, "bogus", true)
		_, err := load()
		Expect(problemsOf(err)).To(HaveLen(4))
		Expect(err.Error()).To(HavePrefix("invalid config:\n"))
	})

	It("reports missing files together with bad values, and a missing path only once", func() {
		Expect(os.Remove(filepath.Join(dir, "client.crt"))).To(Succeed())
		set(doc, "etcd.port", 0)
		set(doc, "etcd.ca_file", "")
		_, err := load()
		Expect(problemsOf(err)).To(ConsistOf(
			"etcd.port: must be a port between 1 and 65535, got 0",
			"etcd.ca_file: is required",
			"etcd.cert_file: cannot read '"+filepath.Join(dir, "client.crt")+"': no such file",
		))
	})

	It("rejects a VNI with a backend that has none", func() {
		set(doc, "network.backend_type", "host-gw")
		_, err := load()
		Expect(problemsOf(err)).To(ConsistOf("network.vni: only applies to the vxlan backend, but backend_type is 'host-gw'"))
	})

	It("wants the enforce record with network.enforce, and not without", func() {
		set(doc, "network.enforce", true)
		_, err := load()
		Expect(problemsOf(err)).To(ConsistOf("network.enforce_record: is required when network.enforce is true " +
			"(the file in which the launcher keeps which network config it last enforced)"))

		set(doc, "network.enforce_record", "/var/vcap/data/flanneld/network-config.enforced")
		cfg, err := load()
		Expect(err).NotTo(HaveOccurred())
		Expect(cfg.Network.EnforceRecord).To(Equal("/var/vcap/data/flanneld/network-config.enforced"))

		set(doc, "network.enforce", false)
		delete(doc["network"].(map[string]any), "enforce_record")
		_, err = load()
		Expect(err).NotTo(HaveOccurred())
	})

	It("rejects a backoff cap below the first backoff", func() {
		set(doc, "timing.backoff_initial", "5s")
		set(doc, "timing.backoff_max", "1s")
		_, err := load()
		Expect(problemsOf(err)).To(ConsistOf("timing.backoff_max: must not be shorter than timing.backoff_initial ('5s'), got '1s'"))
	})

	It("rejects a file that is not JSON", func() {
		Expect(os.WriteFile(path, []byte(`{"etcd": `), 0o640)).To(Succeed())
		_, err := config.Load(path)
		Expect(problemsOf(err)).To(ConsistOf(HavePrefix("config: not valid JSON:")))
	})

	Describe("the TLS files", func() {
		It("names a missing file", func() {
			Expect(os.Remove(filepath.Join(dir, "ca.crt"))).To(Succeed())
			_, err := load()
			Expect(problemsOf(err)).To(ConsistOf("etcd.ca_file: cannot read '" + filepath.Join(dir, "ca.crt") + "': no such file"))
		})

		// Root reads a file whatever its mode, and CI runs as root: then the file belongs to nobody, who loads the
		// config in a process of its own.
		It("names an unreadable file", func() {
			user := asNobody()
			dir := GinkgoT().TempDir()
			if user != nil {
				dir = nobodysDir()
			}
			writeKeyPair(filepath.Join(dir, "client.crt"), filepath.Join(dir, "client.key"))
			writeKeyPair(filepath.Join(dir, "ca.crt"), filepath.Join(dir, "ca.key"))
			path := filepath.Join(dir, "launcher.json")
			writeJSON(path, validJSON(dir))
			giveAway(dir, user)
			Expect(os.Chmod(filepath.Join(dir, "client.crt"), 0)).To(Succeed())

			load := exec.Command(loadCommand, path)
			load.SysProcAttr = &syscall.SysProcAttr{Credential: user}
			out, err := load.Output()

			Expect(err).To(MatchError(ContainSubstring("exit status 2")))
			Expect(string(out)).To(Equal("etcd.cert_file: cannot read '" + filepath.Join(dir, "client.crt") + "': permission denied\n"))
		})

		It("rejects a key that others can read, without printing it", func() {
			keyPath := filepath.Join(dir, "client.key")
			Expect(os.Chmod(keyPath, 0o644)).To(Succeed())
			_, err := load()
			Expect(problemsOf(err)).To(ConsistOf("etcd.key_file: '" + keyPath + "' is readable by others (mode 0644); it must not be (e.g. 0600 or 0640)"))
			Expect(err.Error()).NotTo(ContainSubstring("PRIVATE KEY"))
		})

		It("accepts a key readable by its group, as BOSH renders job files", func() {
			Expect(os.Chmod(filepath.Join(dir, "client.key"), 0o640)).To(Succeed())
			_, err := load()
			Expect(err).NotTo(HaveOccurred())
		})

		It("rejects a CA file without a certificate", func() {
			Expect(os.WriteFile(filepath.Join(dir, "ca.crt"), []byte("not a certificate\n"), 0o644)).To(Succeed())
			_, err := load()
			Expect(problemsOf(err)).To(ConsistOf("etcd.ca_file: '" + filepath.Join(dir, "ca.crt") + "' holds no PEM certificate"))
		})

		// Go's TLS sends no client certificate with a key it cannot sign with (P-224, RSA under 1024 bits), and
		// etcd answers "bad certificate"; under 2048 bits RSA is refused as the template does.
		DescribeTable("rejects a client key that TLS cannot or should not sign with",
			func(key func() (crypto.Signer, error), problem string) {
				signer, err := key()
				Expect(err).NotTo(HaveOccurred())
				writeKeyPairWith(filepath.Join(dir, "client.crt"), filepath.Join(dir, "client.key"), signer)
				_, err = load()
				Expect(problemsOf(err)).To(ConsistOf("etcd.cert_file: '" + filepath.Join(dir, "client.crt") + "' has " + problem))
			},
			Entry("P-224", func() (crypto.Signer, error) { return ecdsa.GenerateKey(elliptic.P224(), rand.Reader) },
				"an ECDSA key on P-224 (P-256, P-384 or P-521 are required)"),
			Entry("RSA 1024", func() (crypto.Signer, error) { return rsa.GenerateKey(rand.Reader, 1024) },
				"an RSA key of 1024 bits (at least 2048 are required)"),
		)

		// x509.CertPool.AppendCertsFromPEM skips a certificate it cannot parse, and that may be the CA that signed
		// the etcd servers' certificates.
		It("rejects a CA file with a certificate that Go cannot parse, after one it can", func() {
			caPath := filepath.Join(dir, "ca.crt")
			good, err := os.ReadFile(caPath)
			Expect(err).NotTo(HaveOccurred())
			bad := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte("not DER")})
			Expect(os.WriteFile(caPath, append(good, bad...), 0o644)).To(Succeed())
			_, err = load()
			Expect(problemsOf(err)).To(ConsistOf(HavePrefix("etcd.ca_file: '" + caPath + "': certificate 2 cannot be used: x509: ")))
		})

		It("rejects a CA with an RSA key under 2048 bits", func() {
			key, err := rsa.GenerateKey(rand.Reader, 1024)
			Expect(err).NotTo(HaveOccurred())
			writeKeyPairWith(filepath.Join(dir, "ca.crt"), filepath.Join(dir, "ca.key"), key)
			_, err = load()
			Expect(problemsOf(err)).To(ConsistOf("etcd.ca_file: '" + filepath.Join(dir, "ca.crt") + "': certificate 1 has an RSA key of 1024 bits (at least 2048 are required)"))
		})

		It("rejects a certificate and key that do not belong together", func() {
			set(doc, "etcd.key_file", filepath.Join(dir, "ca.key"))
			_, err := load()
			Expect(problemsOf(err)).To(ConsistOf(ContainSubstring("etcd.cert_file: '" + filepath.Join(dir, "client.crt") + "' and etcd.key_file")))
		})
	})
})

var _ = Describe("Parse", func() {
	It("does not look at the files", func() {
		data, err := json.Marshal(validJSON("/nonexistent"))
		Expect(err).NotTo(HaveOccurred())
		_, err = config.Parse(data)
		Expect(err).NotTo(HaveOccurred())
	})

	It("round-trips durations as strings", func() {
		data, err := json.Marshal(config.Default().Timing)
		Expect(err).NotTo(HaveOccurred())
		Expect(data).To(ContainSubstring(`"startup_deadline":"5m0s"`))
	})
})
