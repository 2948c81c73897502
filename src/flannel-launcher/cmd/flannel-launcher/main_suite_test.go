package main_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/config"
	"github.com/flannel-dns/flannel-dns/src/testenv/dnsserver"
	"github.com/flannel-dns/flannel-dns/src/testenv/etcdcluster"
	"github.com/flannel-dns/flannel-dns/src/testenv/pki"
	"github.com/flannel-dns/flannel-dns/src/testenv/recordingflanneld/record"
)

func TestFlannelLauncher(t *testing.T) {
	RegisterFailHandler(Fail)
	// generous: two shared cores run several suites at once
	SetDefaultEventuallyTimeout(5 * time.Second)
	RunSpecs(t, "flannel-launcher Suite")
}

const testVersion = "1.2.3-test"

var (
	binaries  struct{ Launcher, Flanneld, BPMSeccomp, NoIPv6, Publisher string }
	ca        *pki.CA
	client    pki.Pair
	cluster   *etcdcluster.Cluster
	dnsServer *dnsserver.Server
	prefixes  atomic.Int32
)

var _ = SynchronizedBeforeSuite(func() []byte {
	launcher, err := gexec.Build("github.com/flannel-dns/flannel-dns/src/flannel-launcher/cmd/flannel-launcher",
		"-race", "-ldflags", "-X main.version="+testVersion)
	Expect(err).NotTo(HaveOccurred())
	flanneld, err := gexec.Build("github.com/flannel-dns/flannel-dns/src/testenv/recordingflanneld")
	Expect(err).NotTo(HaveOccurred())
	bpmSeccomp, err := gexec.Build("github.com/flannel-dns/flannel-dns/src/flannel-launcher/cmd/flannel-launcher/testdata/bpmseccomp")
	Expect(err).NotTo(HaveOccurred())
	noIPv6, err := gexec.Build("github.com/flannel-dns/flannel-dns/src/flannel-launcher/keepalive/testdata/noipv6")
	Expect(err).NotTo(HaveOccurred())
	publisher, err := gexec.Build("github.com/flannel-dns/flannel-dns/src/flannel-launcher/cmd/subnet-publisher", "-race")
	Expect(err).NotTo(HaveOccurred())
	paths, err := json.Marshal([]string{launcher, flanneld, bpmSeccomp, noIPv6, publisher})
	Expect(err).NotTo(HaveOccurred())
	return paths
}, func(paths []byte) {
	var built []string
	Expect(json.Unmarshal(paths, &built)).To(Succeed())
	binaries.Launcher, binaries.Flanneld, binaries.BPMSeccomp, binaries.NoIPv6, binaries.Publisher = built[0], built[1], built[2], built[3], built[4]

	var err error
	ca, err = pki.NewCA(GinkgoT().TempDir(), "etcd-ca")
	Expect(err).NotTo(HaveOccurred())
	client, err = ca.Issue(pki.Client("flanneld"))
	Expect(err).NotTo(HaveOccurred())
	cluster, err = etcdcluster.Start(ca, etcdcluster.Options{Size: 3, Domain: "etcd.test.internal"})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(cluster.Close)
	dnsServer, err = dnsserver.Start()
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(dnsServer.Close)
	cluster.Publish(dnsServer)
})

var _ = SynchronizedAfterSuite(func() {}, func() {
	gexec.CleanupBuildArtifacts()
})

// newConfig points at the suite's cluster and DNS server, with a network config key of its own and short
// timings so that retries show within a test.
func newConfig() config.Config {
	cfg := config.Default()
	cfg.Etcd = config.Etcd{
		Alias: cluster.Alias, Port: cluster.Port,
		Prefix: fmt.Sprintf("/test-%d-%d/network", GinkgoParallelProcess(), prefixes.Add(1)),
		CAFile: ca.CertFile, CertFile: client.CertFile, KeyFile: client.KeyFile,
	}
	cfg.DNS.Server = dnsServer.Addr
	cfg.Network.CIDR = "198.18.0.0/16"
	cfg.Flanneld = config.Flanneld{
		Path: binaries.Flanneld, Iface: "lo", PublicIP: "192.0.2.10", IPMasq: true,
		SubnetFile: "/var/vcap/sys/run/flanneld/test.env", PublishedSubnetFile: "/run/flannel/test.env",
	}
	cfg.Timing = config.Timing{
		StartupDeadline: config.Duration(20 * time.Second),
		DNSTimeout:      config.Duration(500 * time.Millisecond),
		ProbeTimeout:    config.Duration(2 * time.Second), // a cold -race start on a busy machine
		ResolveInterval: config.Duration(100 * time.Millisecond),
		BackoffInitial:  config.Duration(20 * time.Millisecond),
		BackoffMax:      config.Duration(100 * time.Millisecond),
	}
	return cfg
}

func writeConfig(cfg config.Config) string {
	data, err := json.Marshal(cfg)
	Expect(err).NotTo(HaveOccurred())
	return writeConfigJSON(data)
}

func writeConfigJSON(data []byte) string {
	path := filepath.Join(GinkgoT().TempDir(), "launcher.json")
	Expect(os.WriteFile(path, data, 0o600)).To(Succeed())
	return path
}

// start runs the launcher with args; the recording flanneld it starts writes to recordFile and takes its
// steering env vars from env.
func start(recordFile string, env []string, args ...string) *gexec.Session {
	return startUnder(nil, recordFile, env, args...)
}

// startUnder runs the launcher through a wrapper command (prefix), as start does.
func startUnder(prefix []string, recordFile string, env []string, args ...string) *gexec.Session {
	argv := append(append(append([]string(nil), prefix...), binaries.Launcher), args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(append(os.Environ(), record.FileEnv+"="+recordFile), env...)
	session, err := gexec.Start(cmd, GinkgoWriter, GinkgoWriter)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(stopAll, session, recordFile)
	return session
}

// stopAll stops the launcher as bpm would; should that fail, it kills the launcher and the flanneld it
// started, by their PIDs.
func stopAll(session *gexec.Session, recordFile string) {
	session.Terminate()
	select {
	case <-session.Exited:
		return
	case <-time.After(10 * time.Second):
	}
	session.Kill()
	if rec, err := record.Read(recordFile); err == nil {
		_ = syscall.Kill(rec.PID, syscall.SIGKILL) // it may have ended meanwhile
	}
	Eventually(session).Should(gexec.Exit())
}
