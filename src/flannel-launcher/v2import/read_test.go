package v2import_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/v2import"
	"github.com/flannel-dns/flannel-dns/src/testenv/etcdcluster"
	"github.com/flannel-dns/flannel-dns/src/testenv/etcdv2"
)

var _ = Describe("Read", func() {
	var ctx context.Context

	BeforeEach(func() { ctx = context.Background() })

	It("reads the network config and every lease under the prefix with the TTL it has left, over mutual TLS", func() {
		prefix := uniquePrefix()
		Expect(member.Put(prefix+"/config", `{"Network":"198.18.0.0/15","Backend":{"Type":"vxlan"}}`, 0)).To(Succeed())
		Expect(member.Put(prefix+"/subnets/198.18.7.0-24", `{"PublicIP":"192.0.2.7"}`, 3600)).To(Succeed())
		Expect(member.Put(prefix+"/subnets/198.18.9.0-24", `{"PublicIP":"192.0.2.9"}`, 600)).To(Succeed())
		Expect(member.Put(prefix+"/elsewhere", `x`, 0)).To(Succeed())

		data, err := v2import.Read(ctx, httpClient(), member.URL, prefix)

		Expect(err).NotTo(HaveOccurred())
		Expect(string(data.Config)).To(Equal(`{"Network":"198.18.0.0/15","Backend":{"Type":"vxlan"}}`))
		Expect(data.Leases).To(HaveLen(2))
		ttls := map[string]int64{}
		for _, l := range data.Leases {
			ttls[l.Key] = l.TTL
		}
		Expect(ttls[prefix+"/subnets/198.18.7.0-24"]).To(BeNumerically("~", 3600, 10))
		Expect(ttls[prefix+"/subnets/198.18.9.0-24"]).To(BeNumerically("~", 600, 10))
	})

	It("reads what a user allowed only below the prefix may read, as cfcr-etcd 1.11 sets up kubo's flanneld user", func() {
		authed, err := etcdv2.Start(suiteCA, nil)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(authed.Close)
		prefix := uniquePrefix()
		Expect(authed.Put(prefix+"/config", `{"Network":"198.18.0.0/15","Backend":{"Type":"vxlan"}}`, 0)).To(Succeed())
		Expect(authed.Put(prefix+"/subnets/198.18.7.0-24", `{"PublicIP":"192.0.2.7"}`, 3600)).To(Succeed())
		// the launcher's client certificate's CN is flanneld, as kubo's v0.32 manifest names its user
		Expect(authed.EnableAuth("flanneld", prefix+"/*")).To(Succeed())

		data, err := v2import.Read(ctx, httpClient(), authed.URL, prefix)

		Expect(err).NotTo(HaveOccurred())
		Expect(string(data.Config)).To(Equal(`{"Network":"198.18.0.0/15","Backend":{"Type":"vxlan"}}`))
		Expect(data.Leases).To(ConsistOf(HaveField("Key", prefix+"/subnets/198.18.7.0-24")))
	})

	It("reads a prefix the v2 store does not have as no data", func() {
		data, err := v2import.Read(ctx, httpClient(), member.URL, uniquePrefix())

		Expect(err).NotTo(HaveOccurred())
		Expect(data.Config).To(BeNil())
		Expect(data.Leases).To(BeEmpty())
	})

	It("says so when the member does not serve the v2 API (etcd 3.6)", func() {
		cluster, err := etcdcluster.Start(suiteCA, etcdcluster.Options{Size: 1, Domain: "etcd.test.internal"})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(cluster.Close)
		url := "https://" + net.JoinHostPort(cluster.Members[0].IP.String(), strconv.Itoa(cluster.Port))

		_, err = v2import.Read(ctx, httpClient(), url, uniquePrefix())

		Expect(err).To(MatchError(v2import.ErrNotServed))
	})

	It("fails, naming the address, when nothing answers there", func() {
		closed := httptest.NewUnstartedServer(nil)
		url := "https://" + closed.Listener.Addr().String()
		closed.Listener.Close()

		_, err := v2import.Read(ctx, httpClient(), url, uniquePrefix())

		Expect(err).To(MatchError(ContainSubstring("Reading '/test-")))
		Expect(err).To(MatchError(ContainSubstring(closed.Listener.Addr().String())))
		Expect(errors.As(err, new(*v2import.TransientError))).To(BeTrue(), "the member may be back on the next attempt")
	})

	It("follows no redirect, and fails naming it", func() {
		var followed atomic.Int32
		elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			followed.Add(1)
			_, _ = w.Write([]byte(`{"node":{"key":"/","dir":true}}`))
		}))
		DeferCleanup(elsewhere.Close)
		redirecting := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, elsewhere.URL+r.URL.RequestURI(), http.StatusTemporaryRedirect)
		}))
		redirecting.TLS = serverTLS(redirecting.Listener.Addr())
		redirecting.StartTLS()
		DeferCleanup(redirecting.Close)

		_, err := v2import.Read(ctx, httpClient(), redirecting.URL, "/coreos.com/network")

		Expect(err).To(MatchError(HavePrefix("The v2 API at '%s' answered 307 Temporary Redirect to '%s/v2/keys/coreos.com/network/config?recursive=true' "+
			"for '/coreos.com/network/config'; a redirect is not followed", redirecting.URL, elsewhere.URL)))
		Expect(followed.Load()).To(BeZero())
		Expect(errors.As(err, new(*v2import.TransientError))).To(BeFalse(), "a redirect is not retried")
	})

	It("fails with an excerpt when the answer is not the v2 API's JSON", func() {
		garbage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			_, _ = w.Write([]byte("<html>not etcd</html>"))
		}))
		DeferCleanup(garbage.Close)

		_, err := v2import.Read(ctx, http.DefaultClient, garbage.URL, uniquePrefix())

		Expect(err).To(MatchError(ContainSubstring("is not JSON: <html>not etcd</html>")))
		Expect(errors.As(err, new(*v2import.TransientError))).To(BeFalse(), "an answer that is not etcd's is not retried")
	})

	It("fails on another status, with the answer", func() {
		broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, `{"message":"raft internal error"}`, http.StatusInternalServerError)
		}))
		DeferCleanup(broken.Close)

		_, err := v2import.Read(ctx, http.DefaultClient, broken.URL, uniquePrefix())

		Expect(err).To(MatchError(ContainSubstring("answered 500")))
		Expect(err).To(MatchError(ContainSubstring("raft internal error")))
		Expect(errors.As(err, new(*v2import.TransientError))).To(BeTrue(), "a server error may pass")
	})
})

var _ = DescribeTable("Served: whether an etcd version can serve the v2 API",
	func(version string, served bool) {
		Expect(v2import.Served(version)).To(Equal(served))
	},
	Entry("3.4, as kubo's clusters run it", "3.4.37", true),
	Entry("3.5, the last with the v2 API", "3.5.17", true),
	Entry("3.6.0", "3.6.0", false),
	Entry("3.6, as this release runs it", "3.6.16", false),
	Entry("a later minor", "3.7.1", false),
	Entry("a version that does not parse, which may", "unknown", true),
)
