package keepalive_test

import (
	"os"
	"os/exec"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	"github.com/onsi/gomega/gexec"
)

// Every BOSH stemcell boots its kernel with ipv6.disable=1: no AF_INET6 socket can be opened there.
var _ = Describe("the Reaper on a kernel without IPv6", func() {
	It("starts with IPv4 alone", func() {
		client, _ := linkedNamespaces("noipv6")
		reaper := startReaper(client, os.Getpid(), noipv6)
		Consistently(reaper, "1s").ShouldNot(gexec.Exit())
	})

	It("runs under a filter that refuses AF_INET6 sockets", func() {
		probe := exec.Command(noipv6, "ping", "-6", "-c", "1", "::1")
		session, err := gexec.Start(probe, GinkgoWriter, GinkgoWriter)
		Expect(err).NotTo(HaveOccurred())
		Eventually(session).Should(gexec.Exit())
		Expect(session.ExitCode()).NotTo(BeZero())
		Expect(session.Err).To(gbytes.Say("Address family not supported"))
	})
})
