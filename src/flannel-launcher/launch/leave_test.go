package launch_test

import (
	"context"
	"net/netip"
	"strings"
	"time"

	boshlog "github.com/cloudfoundry/bosh-utils/logger"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/config"
	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/flanneld"
	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/launch"
	"github.com/flannel-dns/flannel-dns/src/testenv/loopback"
	"github.com/flannel-dns/flannel-dns/src/testenv/testlog"
)

// Where the kernel destroys no socket, the Reaper hands a dead member to the launcher, which restarts flanneld.
var _ = Describe("Leaving a dead member by restarting flanneld", func() {
	var (
		cfg      config.Config
		logger   boshlog.Logger
		logs     *gbytes.Buffer
		all      []string
		launcher launch.Launcher
	)
	memberAddr := func(i int) netip.Addr {
		addr, ok := netip.AddrFromSlice(cluster.Members[i].IP.To4())
		Expect(ok).To(BeTrue())
		return addr
	}
	endpointsOf := func(args []string) []string {
		for _, arg := range args {
			if value, ok := strings.CutPrefix(arg, "-etcd-endpoints="); ok {
				return strings.Split(value, ",")
			}
		}
		Fail("no -etcd-endpoints in " + strings.Join(args, " "))
		return nil
	}

	BeforeEach(func() {
		cfg = newConfig()
		logger, logs = testlog.New()
		launcher = newLauncher(cfg, "", logger, nil)
		all = nil
		for _, m := range cluster.Members {
			all = append(all, m.ClientURL)
		}
		DeferCleanup(cluster.Publish, dnsServer)
	})

	It("restarts flanneld on the healthy members, without the dead one", func() {
		cluster.Stop(1)
		DeferCleanup(func() { Expect(cluster.Restart(1)).To(Succeed()) })

		restart, restarted := launch.Leave(context.Background(), launcher, memberAddr(1))
		Expect(restarted).To(BeTrue(), string(logs.Contents()))
		Expect(endpointsOf(restart)).To(Equal([]string{cfg.AliasURL(), all[0], all[2]}))
		Expect(restart[1:]).To(Equal(flanneld.Args(cfg, all)[1:]), "only the endpoints change")
		Expect(logs).To(gbytes.Say(`Dead etcd member %s: restarting flanneld on the healthy members`, memberAddr(1)))
	})

	It("retries finding the healthy members while none can be reached, with flanneld left running", func() {
		dnsServer.SetAddresses(cluster.Alias, loopback.IPs(2)...)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		DeferCleanup(cancel)
		go func() {
			defer GinkgoRecover()
			Eventually(logs, 10*time.Second).Should(gbytes.Say(`Dead etcd member %s: flanneld keeps its connections to `+
				`it until the healthy members are found: attempt=2 .*no etcd member answered`, memberAddr(0)))
			cluster.Publish(dnsServer)
		}()

		restart, restarted := launch.Leave(ctx, launcher, memberAddr(0))
		Expect(restarted).To(BeTrue(), string(logs.Contents()))
		Expect(endpointsOf(restart)).To(Equal(append([]string{cfg.AliasURL()}, all...)))
	})

	It("restarts nothing once this flanneld has ended", func() {
		dnsServer.SetAddresses(cluster.Alias, loopback.IPs(2)...)
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		DeferCleanup(cancel)

		_, restarted := launch.Leave(ctx, launcher, memberAddr(0))
		Expect(restarted).To(BeFalse())
		Expect(logs).To(gbytes.Say(`until the healthy members are found: attempt=1 `))
	})
})
