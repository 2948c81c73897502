package launch_test

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/config"
	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/members"
	"github.com/flannel-dns/flannel-dns/src/testenv/dnsserver"
	"github.com/flannel-dns/flannel-dns/src/testenv/etcdcluster"
	"github.com/flannel-dns/flannel-dns/src/testenv/pki"
)

// environment is what both the specs and the benchmarks run against: a three-member TLS etcd cluster and a
// DNS server that answers its alias, all on loopback.
type environment struct {
	dir     string
	ca      *pki.CA
	client  pki.Pair
	cluster *etcdcluster.Cluster
	dns     *dnsserver.Server
}

func startEnvironment() (*environment, error) {
	return startEnvironmentWith(pki.ECDSAP256)
}

// startEnvironmentWith makes every key of the environment with keys.
func startEnvironmentWith(keys pki.Keys) (*environment, error) {
	dir, err := os.MkdirTemp("", "launch-test-")
	if err != nil {
		return nil, err
	}
	env := &environment{dir: dir}
	if err := env.start(keys); err != nil {
		env.close()
		return nil, err
	}
	return env, nil
}

func (e *environment) start(keys pki.Keys) error {
	var err error
	if e.ca, err = pki.NewCAWith(e.dir, "etcd-ca", keys); err != nil {
		return err
	}
	if e.client, err = e.ca.Issue(pki.Client("flanneld")); err != nil {
		return err
	}
	if e.cluster, err = etcdcluster.Start(e.ca, etcdcluster.Options{Size: 3, Domain: "etcd.test.internal"}); err != nil {
		return err
	}
	if e.dns, err = dnsserver.Start(); err != nil {
		return err
	}
	e.cluster.Publish(e.dns)
	return nil
}

func (e *environment) close() {
	if e.dns != nil {
		e.dns.Close()
	}
	if e.cluster != nil {
		e.cluster.Close()
	}
	os.RemoveAll(e.dir)
}

// config points at the cluster and the DNS server and runs flanneldPath; prefix keeps each run's network
// config apart.
func (e *environment) config(prefix, flanneldPath string) config.Config {
	cfg := config.Default()
	cfg.Etcd = config.Etcd{
		Alias: e.cluster.Alias, Port: e.cluster.Port, Prefix: fmt.Sprintf("/%s/network", prefix),
		CAFile: e.ca.CertFile, CertFile: e.client.CertFile, KeyFile: e.client.KeyFile,
	}
	cfg.DNS.Server = e.dns.Addr
	cfg.Network.CIDR = "198.18.0.0/16"
	cfg.Flanneld.Path = flanneldPath
	cfg.Flanneld.Iface = "lo"
	return cfg
}

// shortTimings make retries show within a spec.
func shortTimings() config.Timing {
	return config.Timing{
		StartupDeadline: config.Duration(20 * time.Second),
		DNSTimeout:      config.Duration(500 * time.Millisecond),
		ProbeTimeout:    config.Duration(2 * time.Second), // a cold -race start on a busy machine
		ResolveInterval: config.Duration(50 * time.Millisecond),
		BackoffInitial:  config.Duration(20 * time.Millisecond),
		BackoffMax:      config.Duration(100 * time.Millisecond),
	}
}

// etcdClient talks to the first member directly, as a test's own view of what is stored.
func (e *environment) etcdClient(cfg config.Config) (*clientv3.Client, error) {
	tlsConfig, err := members.TLSConfig(cfg.Etcd, time.Now())
	if err != nil {
		return nil, err
	}
	endpoint := "https://" + net.JoinHostPort(e.cluster.Members[0].IP.String(), strconv.Itoa(e.cluster.Port))
	return clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, TLS: tlsConfig, DialTimeout: 5 * time.Second})
}

// etcdRequestsServed counts the gRPC calls that every member of the in-process cluster has started to serve,
// from the metrics etcd keeps in the process's default registry.
func etcdRequestsServed() (float64, error) {
	families, err := prometheus.DefaultGatherer.Gather()
	if err != nil {
		return 0, err
	}
	total := 0.0
	for _, family := range families {
		if family.GetName() == "grpc_server_started_total" {
			for _, metric := range family.GetMetric() {
				total += metric.GetCounter().GetValue()
			}
		}
	}
	return total, nil
}
