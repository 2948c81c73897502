package keepalive_test

import (
	"context"
	"net"
	"strconv"
	"strings"
	"time"

	boshlog "github.com/cloudfoundry/bosh-utils/logger"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	"github.com/onsi/gomega/gexec"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/keepalive"
	"github.com/flannel-dns/flannel-dns/src/testenv/loopback"
	"github.com/flannel-dns/flannel-dns/src/testenv/testlog"
)

var _ = Describe("Tuner", func() {
	var (
		etcdV6, etcdV4, other *net.TCPAddr
		holder                *gexec.Session
		pid                   int
		logger                boshlog.Logger
		logs                  *gbytes.Buffer
	)

	BeforeEach(func() {
		// the same port on ::1 and on a 127/8 address: IPv6 and IPv4 peers
		etcdV6 = holdingListener("[::1]:0")
		etcdV4 = holdingListener(net.JoinHostPort(loopback.IPs(1)[0].String(), strconv.Itoa(etcdV6.Port)))
		other = holdingListener(net.JoinHostPort(etcdV4.IP.String(), "0"))
		holder = startHolder(nil, "dial", etcdV4.String(), etcdV6.String(), other.String())
		pid = holder.Command.Process.Pid
		logger, logs = testlog.New()
	})

	tuned := options{keepalive: 1, idle: 4, interval: 2, count: 3, userTimeout: 10000}

	It("sets keepalive and the user timeout on the sockets to the port, and only on those", func() {
		before := peerOptions(pid)
		Expect(before[etcdV4.Port]).To(HaveLen(2))
		Expect(before[etcdV4.Port][0].keepalive).To(Equal(0))

		count, err := keepalive.NewTuner(openProcess(pid), etcdV4.Port, keepalive.DefaultSettings(), logger).Cycle()

		Expect(err).NotTo(HaveOccurred())
		Expect(count).To(Equal(2))
		after := peerOptions(pid)
		Expect(after[etcdV4.Port]).To(Equal([]options{tuned, tuned}))
		Expect(after[other.Port]).To(Equal(before[other.Port]))
		Expect(logs).To(gbytes.Say(`Tuned keepalive: pid=%d fd=\d+ peer=\S+ idle=4s interval=2s count=3 user_timeout=10s`, pid))
	})

	It("tunes nothing new on a second pass", func() {
		tuner := keepalive.NewTuner(openProcess(pid), etcdV4.Port, keepalive.DefaultSettings(), logger)
		Expect(tuner.Cycle()).To(Equal(2))

		Expect(tuner.Cycle()).To(Equal(0))
	})

	It("logs each tuned socket with its peer, IPv4 and IPv6", func() {
		_, err := keepalive.NewTuner(openProcess(pid), etcdV4.Port, keepalive.DefaultSettings(), logger).Cycle()

		Expect(err).NotTo(HaveOccurred())
		Expect(logs.Contents()).To(ContainSubstring("peer=%s ", etcdV4))
		Expect(logs.Contents()).To(ContainSubstring("peer=%s ", etcdV6))
		Expect(logs.Contents()).NotTo(ContainSubstring("peer=%s ", other))
	})

	It("runs a cycle on each tick and logs a lasting failure once", func() {
		ctx, cancel := context.WithCancel(context.Background())
		ticks := make(chan time.Time)
		done := make(chan struct{})
		tuner := keepalive.NewTuner(openProcess(pid), etcdV4.Port, keepalive.DefaultSettings(), logger)
		go func() {
			defer close(done)
			tuner.Run(ctx, ticks)
		}()
		DeferCleanup(func() { cancel(); <-done })

		ticks <- time.Now()
		ticks <- time.Now() // taken once the first cycle has finished
		Expect(logs).To(gbytes.Say("Tuned keepalive"))
		Eventually(holder.Kill()).Should(gexec.Exit())
		ticks <- time.Now()
		ticks <- time.Now()
		ticks <- time.Now()
		cancel()
		<-done

		Expect(strings.Count(string(logs.Contents()), "failed, retrying")).To(Equal(1))
	})
})
