package config

import (
	"fmt"
	"maps"
	"net"
	"net/netip"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// The job template checks the same rules (spec-tests/agreement_test.go holds the two to it): ASCII only in a
// name (Go's case-insensitive [a-z] would take U+017F and U+212A), whitespace as Ruby's \s has it.
var (
	dnsLabel = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$`)
	keyPath  = regexp.MustCompile(`^(/[^/\t\n\v\f\r ]+)+$`)
	backends = []string{"vxlan", "host-gw", "udp", "wireguard", "ipip", "ipsec", "alloc"}
)

// ifaceBans may not be in flanneld.iface, which names one interface.
const ifaceBans = " \t\n\v\f\r,"

// controlMessage is the problem of a value that ends up in flanneld's arguments or in a path and holds a
// control character: a NUL makes every exec of flanneld fail, the others name a key, interface or file that
// is not there. The template refuses the same (Go's unicode.IsControl).
const controlMessage = "must not hold control characters (U+0000 to U+001F, U+007F to U+009F), got '%s'"

func hasControl(s string) bool {
	return strings.ContainsFunc(s, unicode.IsControl)
}

// problems collects one line per bad key.
type problems []string

func (p *problems) add(key, format string, args ...any) {
	*p = append(*p, key+": "+oneLine(fmt.Sprintf(format, args...)))
}

// oneLine writes the control characters of a quoted value as Go escapes, so that a problem stays one line.
func oneLine(s string) string {
	if !hasControl(s) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if unicode.IsControl(r) {
			b.WriteString(strings.Trim(strconv.QuoteRune(r), "'"))
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func (c Config) validate() []string {
	var p problems
	c.Etcd.validate(&p)
	c.DNS.validate(&p)
	c.Network.validate(&p)
	c.Flanneld.validate(&p)
	c.Timing.validate(&p)
	return p
}

func (e Etcd) validate(p *problems) {
	switch {
	case e.Alias == "":
		p.add("etcd.alias", "is required (the bosh-dns alias of the etcd cluster, e.g. 'etcd.cfcr.internal')")
	case !isDNSName(e.Alias):
		p.add("etcd.alias", "must be a DNS name, got '%s'", e.Alias)
	}
	checkPort(p, "etcd.port", e.Port, false)
	switch {
	case hasControl(e.Prefix):
		p.add("etcd.prefix", controlMessage, e.Prefix)
	case !keyPath.MatchString(e.Prefix):
		p.add("etcd.prefix", "must be a key path such as '/coreos.com/network', got '%s'", e.Prefix)
	}
	checkAbsolute(p, "etcd.ca_file", e.CAFile)
	checkAbsolute(p, "etcd.cert_file", e.CertFile)
	checkAbsolute(p, "etcd.key_file", e.KeyFile)
}

func (d DNS) validate(p *problems) {
	if d.Server != "" {
		// A zone or port 0 would only fail at the first query.
		if server, err := netip.ParseAddrPort(d.Server); err != nil || server.Port() == 0 || server.Addr().Zone() != "" {
			p.add("dns.server", "must be an IP address and port such as '169.254.0.2:53', got '%s'", d.Server)
		}
		return
	}
	checkAbsolute(p, "dns.resolv_conf", d.ResolvConf)
}

func (n Network) validate(p *problems) {
	prefix, err := netip.ParsePrefix(n.CIDR)
	switch {
	case err != nil || !prefix.Addr().Is4():
		p.add("network.cidr", "must be an IPv4 CIDR such as '10.200.0.0/16', got '%s'", n.CIDR)
	case prefix.Masked() != prefix:
		p.add("network.cidr", "'%s' has host bits set; did you mean '%s'?", n.CIDR, prefix.Masked())
	case n.SubnetLen <= prefix.Bits() || n.SubnetLen > 30:
		p.add("network.subnet_len", "must be longer than the network's /%d and at most 30, got %d", prefix.Bits(), n.SubnetLen)
	}
	if !slices.Contains(backends, n.BackendType) {
		p.add("network.backend_type", "must be one of %s, got '%s'", strings.Join(backends, ", "), n.BackendType)
	}
	if n.VNI != 0 && n.BackendType != "vxlan" && slices.Contains(backends, n.BackendType) {
		p.add("network.vni", "only applies to the vxlan backend, but backend_type is '%s'", n.BackendType)
	} else if n.VNI < 0 || n.VNI > 1<<24-1 {
		p.add("network.vni", "must be between 1 and 16777215, got %d", n.VNI)
	}
	checkPort(p, "network.port", n.Port, true)
	switch {
	case n.EnforceRecord != "":
		checkAbsolute(p, "network.enforce_record", n.EnforceRecord)
	case n.Enforce:
		p.add("network.enforce_record", "is required when network.enforce is true (the file in which the launcher keeps "+
			"which network config it last enforced)")
	}
}

func (f Flanneld) validate(p *problems) {
	checkAbsolute(p, "flanneld.path", f.Path)
	checkAbsolute(p, "flanneld.subnet_file", f.SubnetFile)
	checkAbsolute(p, "flanneld.published_subnet_file", f.PublishedSubnetFile)
	// flanneld's user can write in its file's directory; root alone may write in the copy's.
	if dir := filepath.Dir(f.SubnetFile); f.PublishedSubnetFile != "" && filepath.Dir(f.PublishedSubnetFile) == dir {
		p.add("flanneld.published_subnet_file", "must be outside the directory of flanneld.subnet_file ('%s'), got '%s'",
			dir, f.PublishedSubnetFile)
	}
	// flanneld's IPv4 lease path panics on any other address (an IPv6 one, IPv4 written as IPv6).
	if ip, err := netip.ParseAddr(f.PublicIP); f.PublicIP != "" && (err != nil || !ip.Is4()) {
		p.add("flanneld.public_ip", "must be an IPv4 address (flanneld leases an IPv4 subnet for it), got '%s'", f.PublicIP)
	}
	switch {
	case hasControl(f.Iface):
		p.add("flanneld.iface", controlMessage, f.Iface)
	case strings.ContainsAny(f.Iface, ifaceBans):
		p.add("flanneld.iface", "must be one interface name or address, got '%s'", f.Iface)
	}
}

func (t Timing) validate(p *problems) {
	durations := map[string]Duration{
		"timing.startup_deadline": t.StartupDeadline, "timing.dns_timeout": t.DNSTimeout,
		"timing.probe_timeout": t.ProbeTimeout, "timing.resolve_interval": t.ResolveInterval,
		"timing.backoff_initial": t.BackoffInitial, "timing.backoff_max": t.BackoffMax,
	}
	for _, key := range slices.Sorted(maps.Keys(durations)) {
		if durations[key] <= 0 {
			p.add(key, "must be longer than zero, got '%s'", durations[key].D())
		}
	}
	if t.BackoffMax < t.BackoffInitial {
		p.add("timing.backoff_max", "must not be shorter than timing.backoff_initial ('%s'), got '%s'", t.BackoffInitial.D(), t.BackoffMax.D())
	}
}

func checkPort(p *problems, key string, port int, zeroAllowed bool) {
	if (port == 0 && zeroAllowed) || (port >= 1 && port <= 65535) {
		return
	}
	p.add(key, "must be a port between 1 and 65535, got %s", strconv.Itoa(port))
}

// checkAbsolute wants a path as the job renders it: absolute, and clean, so that it names the file it seems to
// (flanneld writes the subnet file, the launcher runs flanneld.path).
func checkAbsolute(p *problems, key, path string) {
	switch {
	case path == "":
		p.add(key, "is required")
	case hasControl(path):
		p.add(key, controlMessage, path)
	case !filepath.IsAbs(path):
		p.add(key, "must be an absolute path, got '%s'", path)
	case filepath.Clean(path) != path:
		p.add(key, "must be a clean absolute path (no '.' or '..' parts, no '//', no trailing '/'), got '%s'", path)
	}
}

func isDNSName(name string) bool {
	name = strings.TrimSuffix(name, ".")
	if len(name) == 0 || len(name) > 253 || net.ParseIP(name) != nil {
		return false
	}
	for _, label := range strings.Split(name, ".") {
		if !dnsLabel.MatchString(label) {
			return false
		}
	}
	return true
}
