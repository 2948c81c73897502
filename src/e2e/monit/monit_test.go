package monit_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/flannel-dns/flannel-dns/src/e2e/monit"
)

var _ = Describe("Parse", func() {
	It("reads every checked process with its pidfile and programs", func() {
		procs, err := monit.Parse([]byte(`
check process bosh-dns
  with pidfile /var/vcap/sys/run/bpm/bosh-dns/bosh-dns.pid
  start program "/var/vcap/jobs/bpm/bin/bpm start bosh-dns"
  stop program "/var/vcap/jobs/bpm/bin/bpm stop bosh-dns"
  group vcap

# the health server
check process bosh-dns-healthcheck
  with pidfile /var/vcap/sys/run/bpm/bosh-dns/bosh-dns-health.pid
  start program = "/var/vcap/jobs/bpm/bin/bpm start bosh-dns -p bosh-dns-health"
  stop program "/var/vcap/jobs/bpm/bin/bpm stop bosh-dns -p bosh-dns-health" with timeout 60 seconds
  depends on bosh-dns
`))
		Expect(err).NotTo(HaveOccurred())
		Expect(procs).To(Equal([]monit.Process{
			{Name: "bosh-dns", PIDFile: "/var/vcap/sys/run/bpm/bosh-dns/bosh-dns.pid",
				Start: []string{"/var/vcap/jobs/bpm/bin/bpm", "start", "bosh-dns"},
				Stop:  []string{"/var/vcap/jobs/bpm/bin/bpm", "stop", "bosh-dns"}},
			{Name: "bosh-dns-healthcheck", PIDFile: "/var/vcap/sys/run/bpm/bosh-dns/bosh-dns-health.pid",
				Start: []string{"/var/vcap/jobs/bpm/bin/bpm", "start", "bosh-dns", "-p", "bosh-dns-health"},
				Stop:  []string{"/var/vcap/jobs/bpm/bin/bpm", "stop", "bosh-dns", "-p", "bosh-dns-health"}},
		}))
	})

	It("has no processes for a job without any", func() {
		Expect(monit.Parse([]byte("\n"))).To(BeEmpty())
	})

	It("refuses a process that monit could not start or watch", func() {
		_, err := monit.Parse([]byte("check process x\n  start program \"/bin/x\"\n"))
		Expect(err).To(MatchError(ContainSubstring("Process 'x' lacks a pidfile")))
		_, err = monit.Parse([]byte("check process y\n  matching \"y\"\n"))
		Expect(err).To(MatchError(ContainSubstring("matching")))
	})
})
