// Package config loads the launcher's JSON config: defaults first, then a strict decode (unknown keys are
// rejected), then validation that reports every problem at once.
package config

import (
	"net"
	"os"
	"strconv"
	"time"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
)

type Config struct {
	Etcd     Etcd     `json:"etcd"`
	DNS      DNS      `json:"dns"`
	Network  Network  `json:"network"`
	Flanneld Flanneld `json:"flanneld"`
	Timing   Timing   `json:"timing"`
}

type Etcd struct {
	Alias    string `json:"alias"`
	Port     int    `json:"port"`
	Prefix   string `json:"prefix"`
	CAFile   string `json:"ca_file"`
	CertFile string `json:"cert_file"`
	KeyFile  string `json:"key_file"`
}

type DNS struct {
	Server     string `json:"server"`
	ResolvConf string `json:"resolv_conf"`
}

type Network struct {
	CIDR        string `json:"cidr"`
	SubnetLen   int    `json:"subnet_len"`
	BackendType string `json:"backend_type"`
	VNI         int    `json:"vni"`
	Port        int    `json:"port"`
	Enforce     bool   `json:"enforce"`
	// EnforceRecord is the file in which the launcher keeps which network config it last enforced (package
	// netconfig); required with Enforce.
	EnforceRecord string `json:"enforce_record"`
}

type Flanneld struct {
	Path     string `json:"path"`
	Iface    string `json:"iface"`
	PublicIP string `json:"public_ip"`
	IPMasq   bool   `json:"ip_masq"`
	// SubnetFile is where flanneld writes its subnet file (-subnet-file), in a directory its user can write.
	SubnetFile string `json:"subnet_file"`
	// PublishedSubnetFile is the copy that the job's subnet-publisher writes, as root, for docker's job and the
	// flannel CNI plugin; wait-ready waits until it holds what flanneld wrote.
	PublishedSubnetFile string `json:"published_subnet_file"`
}

type Timing struct {
	StartupDeadline Duration `json:"startup_deadline"`
	DNSTimeout      Duration `json:"dns_timeout"`
	ProbeTimeout    Duration `json:"probe_timeout"`
	ResolveInterval Duration `json:"resolve_interval"`
	BackoffInitial  Duration `json:"backoff_initial"`
	BackoffMax      Duration `json:"backoff_max"`
}

// Default holds every value an operator may leave out. The alias, the network and the TLS files have no
// default on purpose: the job template always renders them.
func Default() Config {
	return Config{
		Etcd:    Etcd{Port: 2379, Prefix: "/coreos.com/network"},
		DNS:     DNS{ResolvConf: "/etc/resolv.conf"},
		Network: Network{SubnetLen: 24, BackendType: "vxlan"},
		Flanneld: Flanneld{Path: "/var/vcap/packages/flannel/bin/flanneld", IPMasq: true,
			SubnetFile: "/var/vcap/sys/run/flanneld/subnet.env", PublishedSubnetFile: "/run/flannel/subnet.env"},
		Timing: Timing{
			StartupDeadline: Duration(5 * time.Minute),
			DNSTimeout:      Duration(2 * time.Second),
			ProbeTimeout:    Duration(time.Second),
			ResolveInterval: Duration(10 * time.Second),
			BackoffInitial:  Duration(250 * time.Millisecond),
			BackoffMax:      Duration(10 * time.Second),
		},
	}
}

// Load reads, decodes and validates the config file, including the TLS files it names.
func Load(path string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, bosherr.WrapErrorf(err, "Reading config file '%s'", path)
	}
	cfg, problems := parse(data)
	if !isSyntaxProblem(problems) {
		problems = append(problems, withoutKeys(checkTLSFiles(cfg.Etcd), problems)...)
	}
	if len(problems) > 0 {
		return Config{}, &InvalidError{Problems: problems}
	}
	return cfg, nil
}

// Parse decodes and validates a config without looking at the files it names.
func Parse(data []byte) (Config, error) {
	cfg, problems := parse(data)
	if len(problems) > 0 {
		return Config{}, &InvalidError{Problems: problems}
	}
	return cfg, nil
}

// parse decodes onto the defaults and validates; the config is returned even when it has problems, so that
// Load can check the files it names too and report everything at once.
func parse(data []byte) (Config, []string) {
	cfg := Default()
	problems := decode(data, &cfg)
	if !isSyntaxProblem(problems) {
		problems = append(problems, withoutKeys(cfg.validate(), problems)...)
	}
	return cfg, problems
}

// AliasURL is the etcd endpoint that always comes first: bosh-dns answers it with the current members.
func (c Config) AliasURL() string {
	return "https://" + net.JoinHostPort(c.Etcd.Alias, strconv.Itoa(c.Etcd.Port))
}

// NetworkConfigKey is where flanneld reads its network config.
func (e Etcd) NetworkConfigKey() string {
	return e.Prefix + "/config"
}
