package spectests_test

import (
	"encoding/json"
	"strings"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/config"
)

const launcherConfig = "config/flannel-launcher.json"

func renderConfig(dotted map[string]interface{}) ([]byte, error) {
	return renderer.RenderFile(flanneld, launcherConfig, withTLS(dotted), worker(0))
}

// renderedDefaults is the launcher's config as the template renders it with no property set, rendered once
// for the specs that only put values into it.
var renderedDefaults = sync.OnceValues(func() ([]byte, error) { return renderConfig(nil) })

// lookup reads a dotted key ("network.cidr") out of the rendered JSON.
func lookup(rendered []byte, key string) interface{} {
	var value interface{}
	Expect(json.Unmarshal(rendered, &value)).To(Succeed())
	for _, part := range strings.Split(key, ".") {
		object, ok := value.(map[string]interface{})
		Expect(ok).To(BeTrue(), "no object at %q in %s", part, rendered)
		value, ok = object[part]
		Expect(ok).To(BeTrue(), "no key %q in %s", key, rendered)
	}
	return value
}

// settableProperties: each property, set to a value other than its default, and where it must land in the
// launcher config. A property the spec gains without an entry here fails a test below.
var settableProperties = map[string]struct {
	value interface{}
	key   string
	want  interface{}
}{
	"pod-network-cidr":          {"198.18.0.0/15", "network.cidr", "198.18.0.0/15"},
	"subnet-len":                {26, "network.subnet_len", 26.0},
	"backend-type":              {"host-gw", "network.backend_type", "host-gw"},
	"vni":                       {4096, "network.vni", 4096.0},
	"port":                      {4789, "network.port", 4789.0},
	"enforce-network-config":    {true, "network.enforce", true},
	"etcd.alias":                {"etcd.example.internal", "etcd.alias", "etcd.example.internal"},
	"etcd.port":                 {4001, "etcd.port", 4001.0},
	"etcd.prefix":               {"/flannel/network", "etcd.prefix", "/flannel/network"},
	"etcd.dns-server":           {"127.0.0.53:5353", "dns.server", "127.0.0.53:5353"},
	"iface":                     {"eth1", "flanneld.iface", "eth1"},
	"public-ip":                 {"192.0.2.7", "flanneld.public_ip", "192.0.2.7"},
	"ip-masq":                   {false, "flanneld.ip_masq", false},
	"subnet-file":               {"/run/flannel/other.env", "flanneld.published_subnet_file", "/run/flannel/other.env"},
	"launcher.startup-deadline": {"90s", "timing.startup_deadline", "90s"},
	"launcher.dns-timeout":      {"3s", "timing.dns_timeout", "3s"},
	"launcher.probe-timeout":    {"1500ms", "timing.probe_timeout", "1500ms"},
	"launcher.resolve-interval": {"1m", "timing.resolve_interval", "1m"},
	"launcher.backoff-initial":  {"100ms", "timing.backoff_initial", "100ms"},
	"launcher.backoff-max":      {"1m30s", "timing.backoff_max", "1m30s"},
}

var _ = Describe("flanneld's launcher config", func() {
	It("holds the spec's defaults, which the launcher's own config package accepts as they are", func() {
		rendered, err := renderConfig(nil)
		Expect(err).NotTo(HaveOccurred())
		cfg, err := config.Parse(rendered)
		Expect(err).NotTo(HaveOccurred())

		want := config.Default()
		want.Etcd.Alias = "etcd.cfcr.internal"
		want.Etcd.CAFile = "/var/vcap/jobs/flanneld/config/etcd-ca.crt"
		want.Etcd.CertFile = "/var/vcap/jobs/flanneld/config/etcd-client.crt"
		want.Etcd.KeyFile = "/var/vcap/jobs/flanneld/config/etcd-client.key"
		want.Network.CIDR = "10.200.0.0/16"
		want.Network.EnforceRecord = "/var/vcap/data/flanneld/network-config.enforced"
		Expect(cfg).To(Equal(want))
	})

	It("has a case below for every property of the spec", func() {
		for name := range flanneld.Properties {
			if strings.HasPrefix(name, "tls.etcdctl.") {
				continue // rendered into files; see the TLS tests
			}
			if name == "launcher.ready-timeout" {
				continue // bin/post-start's; see the lifecycle tests
			}
			Expect(settableProperties).To(HaveKey(name), "property %q is not tested", name)
		}
	})

	for name, c := range settableProperties {
		It("puts "+name+" into "+c.key+", and the launcher accepts it", func() {
			rendered, err := renderConfig(map[string]interface{}{name: c.value})
			Expect(err).NotTo(HaveOccurred())
			Expect(lookup(rendered, c.key)).To(Equal(c.want))
			_, err = config.Parse(rendered)
			Expect(err).NotTo(HaveOccurred())
		})
	}

	It("accepts every flannel backend that works under bpm (udp and ipsec do not: see the validation tests)", func() {
		for _, backend := range []string{"vxlan", "host-gw", "wireguard", "ipip", "alloc"} {
			rendered, err := renderConfig(map[string]interface{}{"backend-type": backend})
			Expect(err).NotTo(HaveOccurred(), backend)
			Expect(lookup(rendered, "network.backend_type")).To(Equal(backend))
		}
	})

	It("leaves vni and port at 0 (flannel's defaults) when they are unset", func() {
		rendered, err := renderConfig(nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(lookup(rendered, "network.vni")).To(Equal(0.0))
		Expect(lookup(rendered, "network.port")).To(Equal(0.0))
	})

	It("names the TLS files the job renders", func() {
		rendered, err := renderConfig(nil)
		Expect(err).NotTo(HaveOccurred())
		for _, key := range []string{"etcd.ca_file", "etcd.cert_file", "etcd.key_file"} {
			path := lookup(rendered, key).(string)
			Expect(path).To(HavePrefix("/var/vcap/jobs/flanneld/"))
			Expect(flanneld.Templates).To(ContainElement(strings.TrimPrefix(path, "/var/vcap/jobs/flanneld/")))
		}
	})
})
