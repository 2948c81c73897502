package netconfig_test

import (
	"fmt"
	"net"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	boshlog "github.com/cloudfoundry/bosh-utils/logger"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/config"
	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/members"
	"github.com/flannel-dns/flannel-dns/src/testenv/etcdcluster"
	"github.com/flannel-dns/flannel-dns/src/testenv/pki"
	"github.com/flannel-dns/flannel-dns/src/testenv/testlog"
)

func TestNetconfig(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Netconfig Suite")
}

// One single-member TLS cluster for the suite; each spec works under a key of its own.
var (
	cluster *etcdcluster.Cluster
	etcd    config.Etcd
	keys    atomic.Int32
)

var _ = BeforeSuite(func() {
	ca, err := pki.NewCA(GinkgoT().TempDir(), "etcd-ca")
	Expect(err).NotTo(HaveOccurred())
	client, err := ca.Issue(pki.Client("flanneld"))
	Expect(err).NotTo(HaveOccurred())
	cluster, err = etcdcluster.Start(ca, etcdcluster.Options{Size: 1, Domain: "etcd.test.internal"})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(cluster.Close)
	etcd = config.Etcd{CAFile: ca.CertFile, CertFile: client.CertFile, KeyFile: client.KeyFile}
	suiteCA = ca
})

var suiteCA *pki.CA

// newClient dials the suite cluster's member directly; see clientOf.
func newClient() *clientv3.Client {
	return clientOf(cluster)
}

// clientOf dials c's first member at its address (its certificate names the address too), with the launcher's
// TLS setup.
func clientOf(c *etcdcluster.Cluster) *clientv3.Client {
	tlsConfig, err := members.TLSConfig(etcd, time.Now())
	Expect(err).NotTo(HaveOccurred())
	endpoint := "https://" + net.JoinHostPort(c.Members[0].IP.String(), strconv.Itoa(c.Port))
	client, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, TLS: tlsConfig, DialTimeout: 10 * time.Second})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(client.Close)
	return client
}

func uniqueKey() string {
	return fmt.Sprintf("/test-%d-%d/network/config", GinkgoParallelProcess(), keys.Add(1))
}

func newLoggerOnly() boshlog.Logger {
	logger, _ := testlog.New()
	return logger
}
