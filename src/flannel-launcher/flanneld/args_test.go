package flanneld_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/config"
	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/flanneld"
)

var _ = Describe("Args", func() {
	var cfg config.Config

	BeforeEach(func() {
		cfg = config.Default()
		cfg.Etcd.Alias = "etcd.cfcr.internal"
		cfg.Etcd.CAFile = "/jobs/flanneld/config/etcd-ca.crt"
		cfg.Etcd.CertFile = "/jobs/flanneld/config/etcd-client.crt"
		cfg.Etcd.KeyFile = "/jobs/flanneld/config/etcd-client.key"
		cfg.Flanneld.Iface = "eth0"
		cfg.Flanneld.PublicIP = "192.0.2.10"
	})

	It("puts the alias first, then each member once, then prefix, TLS files and options", func() {
		args := flanneld.Args(cfg, []string{
			"https://master-0.etcd.cfcr.internal:2379",
			"https://master-1.etcd.cfcr.internal:2379",
			"https://master-0.etcd.cfcr.internal:2379",
			"https://etcd.cfcr.internal:2379",
		})
		Expect(args).To(Equal([]string{
			"-etcd-endpoints=https://etcd.cfcr.internal:2379,https://master-0.etcd.cfcr.internal:2379,https://master-1.etcd.cfcr.internal:2379",
			"-etcd-prefix=/coreos.com/network",
			"-etcd-cafile=/jobs/flanneld/config/etcd-ca.crt",
			"-etcd-certfile=/jobs/flanneld/config/etcd-client.crt",
			"-etcd-keyfile=/jobs/flanneld/config/etcd-client.key",
			"-iface=eth0",
			"-public-ip=192.0.2.10",
			"-ip-masq",
			"-subnet-file=/var/vcap/sys/run/flanneld/subnet.env",
		}))
	})

	It("passes only the alias when no member is healthy", func() {
		Expect(flanneld.Args(cfg, nil)[0]).To(Equal("-etcd-endpoints=https://etcd.cfcr.internal:2379"))
	})

	It("leaves out the options the config does not set", func() {
		cfg.Etcd.Port = 4001
		cfg.Etcd.Prefix = "/flannel"
		cfg.Flanneld = config.Flanneld{Path: "/bin/flanneld"}
		Expect(flanneld.Args(cfg, nil)).To(Equal([]string{
			"-etcd-endpoints=https://etcd.cfcr.internal:4001",
			"-etcd-prefix=/flannel",
			"-etcd-cafile=/jobs/flanneld/config/etcd-ca.crt",
			"-etcd-certfile=/jobs/flanneld/config/etcd-client.crt",
			"-etcd-keyfile=/jobs/flanneld/config/etcd-client.key",
		}))
	})
})
