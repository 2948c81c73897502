package spectests_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("flanneld's template validation", func() {
	// Each bad value must stop rendering (and so `bosh deploy`) with a message naming the property and, unless
	// it is a secret, quoting the value.
	DescribeTable("fails on a bad value, naming the property",
		func(dotted map[string]interface{}, want ...string) {
			_, err := renderConfig(dotted)
			expectFailureNaming(err, want...)
		},
		Entry("CIDR without a prefix", map[string]interface{}{"pod-network-cidr": "10.200.0.0"}, "pod-network-cidr", "'10.200.0.0'"),
		Entry("CIDR with host bits", map[string]interface{}{"pod-network-cidr": "10.200.0.1/16"}, "pod-network-cidr", "'10.200.0.1/16'"),
		Entry("IPv6 CIDR", map[string]interface{}{"pod-network-cidr": "fd00::/8"}, "pod-network-cidr", "'fd00::/8'"),
		Entry("not a CIDR", map[string]interface{}{"pod-network-cidr": "pods"}, "pod-network-cidr", "'pods'"),
		Entry("subnet as wide as the network", map[string]interface{}{"subnet-len": 16}, "subnet-len", "'16'"),
		Entry("subnet too narrow", map[string]interface{}{"subnet-len": 31}, "subnet-len", "'31'"),
		Entry("unknown backend", map[string]interface{}{"backend-type": "vxlan2"}, "backend-type", "'vxlan2'"),
		Entry("udp, which needs /dev/net/tun in bpm's container", map[string]interface{}{"backend-type": "udp"},
			"backend-type cannot be udp: flanneld runs under bpm", "/dev/net/tun", "got 'udp'"),
		Entry("ipsec, which needs strongSwan's charon", map[string]interface{}{"backend-type": "ipsec"},
			"backend-type cannot be ipsec: flanneld runs under bpm", "charon", "got 'ipsec'"),
		Entry("post-start's timeout without a unit", map[string]interface{}{"launcher.ready-timeout": "60"}, "launcher.ready-timeout", "'60'"),
		Entry("post-start's timeout zero", map[string]interface{}{"launcher.ready-timeout": "0s"}, "launcher.ready-timeout", "'0s'"),
		Entry("backend port too high", map[string]interface{}{"port": 70000}, "port", "'70000'"),
		Entry("backend port negative", map[string]interface{}{"port": -1}, "port", "'-1'"),
		Entry("backend port not a number", map[string]interface{}{"port": "udp"}, "port", "'udp'"),
		Entry("vni too large", map[string]interface{}{"vni": 16777216}, "vni", "'16777216'"),
		Entry("vni without vxlan", map[string]interface{}{"vni": 2, "backend-type": "host-gw"}, "vni only applies to the vxlan backend (backend-type is 'host-gw'), got '2'"),
		Entry("etcd port zero", map[string]interface{}{"etcd.port": 0}, "etcd.port", "'0'"),
		Entry("etcd port too high", map[string]interface{}{"etcd.port": 65536}, "etcd.port", "'65536'"),
		Entry("empty alias", map[string]interface{}{"etcd.alias": ""}, "etcd.alias", "''"),
		Entry("alias not a DNS name", map[string]interface{}{"etcd.alias": "etcd_cluster!"}, "etcd.alias", "'etcd_cluster!'"),
		Entry("relative prefix", map[string]interface{}{"etcd.prefix": "coreos.com/network"}, "etcd.prefix", "'coreos.com/network'"),
		Entry("prefix with a trailing slash", map[string]interface{}{"etcd.prefix": "/coreos.com/"}, "etcd.prefix", "'/coreos.com/'"),
		Entry("DNS server without a port", map[string]interface{}{"etcd.dns-server": "169.254.0.2"}, "etcd.dns-server", "'169.254.0.2'"),
		Entry("public IP not an address", map[string]interface{}{"public-ip": "192.0.2"}, "public-ip", "'192.0.2'"),
		Entry("two interfaces", map[string]interface{}{"iface": "eth0,eth1"}, "iface", "'eth0,eth1'"),
		Entry("ip-masq not a boolean", map[string]interface{}{"ip-masq": "yes"}, "ip-masq", "'yes'"),
		Entry("enforce not a boolean", map[string]interface{}{"enforce-network-config": "no"}, "enforce-network-config", "'no'"),
		Entry("relative subnet file", map[string]interface{}{"subnet-file": "subnet.env"}, "subnet-file", "'subnet.env'"),
		// bin/start keeps /run/flannel root's alone, bpm mounts it and bin/subnet-publisher writes in it: nothing
		// else may be named.
		Entry("subnet file with a command substitution", map[string]interface{}{"subnet-file": "/run/$(id)/subnet.env"}, "subnet-file", "'/run/$(id)/subnet.env'"),
		Entry("subnet file directly in /run", map[string]interface{}{"subnet-file": "/run/subnet.env"}, "subnet-file", "'/run/subnet.env'"),
		Entry("subnet file in /etc", map[string]interface{}{"subnet-file": "/etc/x"}, "subnet-file", "'/etc/x'"),
		Entry("subnet file in /", map[string]interface{}{"subnet-file": "/x"}, "subnet-file", "'/x'"),
		Entry("subnet file that climbs out of /run/flannel", map[string]interface{}{"subnet-file": "/run/flannel/../x"}, "subnet-file", "'/run/flannel/../x'"),
		Entry("subnet file in a subdirectory", map[string]interface{}{"subnet-file": "/run/flannel/sub/x"}, "subnet-file", "'/run/flannel/sub/x'"),
		Entry("subnet file that is the directory", map[string]interface{}{"subnet-file": "/run/flannel/"}, "subnet-file", "'/run/flannel/'"),
		Entry("subnet file named ..", map[string]interface{}{"subnet-file": "/run/flannel/.."}, "subnet-file", "'/run/flannel/..'"),
		Entry("subnet file in a look-alike directory", map[string]interface{}{"subnet-file": "/run/flannel-dns/subnet.env"}, "subnet-file", "'/run/flannel-dns/subnet.env'"),
		Entry("subnet file with a space", map[string]interface{}{"subnet-file": "/run/flannel/a b"}, "subnet-file", "'/run/flannel/a b'"),
		Entry("subnet file with a quote", map[string]interface{}{"subnet-file": `/run/flannel/a"b`}, "subnet-file", `'/run/flannel/a"b'`),
		Entry("subnet file with a newline", map[string]interface{}{"subnet-file": "/run/flannel/a\nb"}, "subnet-file"),
		Entry("duration without a unit", map[string]interface{}{"launcher.dns-timeout": "2"}, "launcher.dns-timeout", "'2'"),
		Entry("zero duration", map[string]interface{}{"launcher.startup-deadline": "0s"}, "launcher.startup-deadline", "'0s'"),
		// The launcher refused these on the VM, after the render: the canary's flanneld stopped at post-start.
		Entry("alias that is an address", map[string]interface{}{"etcd.alias": "192.0.2.1"}, "etcd.alias", "'192.0.2.1'"),
		Entry("alias that is an address with a final dot", map[string]interface{}{"etcd.alias": "192.0.2.1."}, "etcd.alias", "'192.0.2.1.'"),
		Entry("DNS server with an octet above 255", map[string]interface{}{"etcd.dns-server": "999.1.1.1:53"}, "etcd.dns-server", "'999.1.1.1:53'"),
		Entry("DNS server port above 65535", map[string]interface{}{"etcd.dns-server": "1.2.3.4:99999"}, "etcd.dns-server", "'1.2.3.4:99999'"),
		Entry("DNS server with a leading zero", map[string]interface{}{"etcd.dns-server": "01.2.3.4:53"}, "etcd.dns-server", "'01.2.3.4:53'"),
		Entry("DNS server on port 0", map[string]interface{}{"etcd.dns-server": "169.254.0.2:0"}, "etcd.dns-server", "'169.254.0.2:0'"),
		Entry("DNS server with a zone", map[string]interface{}{"etcd.dns-server": "[fe80::1%eth0]:53"}, "etcd.dns-server", "'[fe80::1%eth0]:53'"),
		Entry("DNS server IPv4 in brackets", map[string]interface{}{"etcd.dns-server": "[192.0.2.1]:53"}, "etcd.dns-server", "'[192.0.2.1]:53'"),
		Entry("public IP with a zone", map[string]interface{}{"public-ip": "fe80::1%eth0"}, "public-ip", "'fe80::1%eth0'"),
		Entry("startup deadline beyond Go's durations", map[string]interface{}{"launcher.startup-deadline": "9999999999h"}, "launcher.startup-deadline", "'9999999999h'"),
		Entry("duration that rounds to zero", map[string]interface{}{"launcher.probe-timeout": "0.5ns"}, "launcher.probe-timeout", "'0.5ns'"),
		Entry("backoff cap below the first backoff", map[string]interface{}{"launcher.backoff-max": "100ms"},
			"launcher.backoff-max must not be shorter than launcher.backoff-initial ('250ms'), got '100ms'"),
		Entry("CIDR with a leading zero", map[string]interface{}{"pod-network-cidr": "010.200.0.0/16"}, "pod-network-cidr", "'010.200.0.0/16'"),
		Entry("CIDR prefix length with a leading zero", map[string]interface{}{"pod-network-cidr": "10.200.0.0/016"}, "pod-network-cidr", "'10.200.0.0/016'"),
		// flanneld's IPv4 lease path panicked on it, and monit restarted flanneld without end.
		Entry("IPv6 public IP", map[string]interface{}{"public-ip": "2001:db8::1"}, "public-ip must be an IPv4 address", "'2001:db8::1'"),
		Entry("public IP as IPv4 in IPv6", map[string]interface{}{"public-ip": "::ffff:192.0.2.7"}, "public-ip must be an IPv4 address", "'::ffff:192.0.2.7'"),
		Entry("a certificate without its key", map[string]interface{}{"tls.etcdctl.private_key": ""}, "tls.etcdctl.private_key"),
		Entry("a key without its certificate", map[string]interface{}{"tls.etcdctl.certificate": ""}, "tls.etcdctl.certificate"),
		Entry("no CA", map[string]interface{}{"tls.etcdctl.ca": ""}, "tls.etcdctl.ca"),
		Entry("a CA that is not PEM", map[string]interface{}{"tls.etcdctl.ca": "not a certificate"}, "tls.etcdctl.ca must hold PEM certificates"),
		Entry("a certificate that is not PEM", map[string]interface{}{"tls.etcdctl.certificate": "garbage"}, "tls.etcdctl.certificate must be a PEM certificate"),
		Entry("a key that is not PEM", map[string]interface{}{"tls.etcdctl.private_key": "garbage"}, "tls.etcdctl.private_key"),
	)

	It("says which key does not belong to the certificate, without quoting the key", func() {
		_, err := renderConfig(map[string]interface{}{"tls.etcdctl.private_key": tlsPEMs.otherKey})
		Expect(err).To(MatchError(ContainSubstring("tls.etcdctl.private_key does not belong to tls.etcdctl.certificate")))
		Expect(err.Error()).NotTo(ContainSubstring("PRIVATE KEY"))
	})

	It("never quotes a PEM value, even one pasted into the wrong property", func() {
		_, err := renderConfig(map[string]interface{}{"tls.etcdctl.ca": tlsPEMs.otherKey, "tls.etcdctl.certificate": tlsPEMs.otherKey})
		expectFailureNaming(err, "tls.etcdctl.ca must hold PEM certificates", "tls.etcdctl.certificate must be a PEM certificate")
		Expect(err.Error()).NotTo(ContainSubstring("PRIVATE KEY"))
	})

	It("blames only the network when it is not a CIDR, not the subnet length", func() {
		_, err := renderConfig(map[string]interface{}{"pod-network-cidr": "10.200.0.0/33"})
		expectFailureNaming(err, "pod-network-cidr")
		Expect(err.Error()).NotTo(ContainSubstring("subnet-len"))
	})

	It("reports every bad property at once", func() {
		_, err := renderConfig(map[string]interface{}{"backend-type": "bogus", "etcd.port": 0, "pod-network-cidr": "x"})
		expectFailureNaming(err, "backend-type", "etcd.port", "pod-network-cidr")
	})

	It("fails the whole job, not just the one file", func() {
		_, err := renderer.Render(flanneld, withTLS(map[string]interface{}{"backend-type": "bogus"}), worker(0))
		Expect(err).To(MatchError(ContainSubstring("backend-type")))
	})
})
