package main_test

import (
	"os/exec"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	"github.com/onsi/gomega/gexec"
)

var _ = Describe("flannel-launcher usage", func() {
	launcher := func(args ...string) *gexec.Session {
		session, err := gexec.Start(exec.Command(binaries.Launcher, args...), GinkgoWriter, GinkgoWriter)
		Expect(err).NotTo(HaveOccurred())
		Eventually(session, 5*time.Second).Should(gexec.Exit())
		return session
	}

	It("prints the version set at build time", func() {
		session := launcher("version")
		Expect(session).To(gexec.Exit(0))
		Expect(session.Out).To(gbytes.Say("^" + testVersion + "\n$"))
	})

	It("prints the usage for --help and exits 0", func() {
		session := launcher("--help")
		Expect(session).To(gexec.Exit(0))
		Expect(session.Out).To(gbytes.Say(`flannel-launcher run --config FILE`))
		Expect(session.Out).To(gbytes.Say(`flannel-launcher check --config FILE \[--json\]`))
		Expect(session.Out).To(gbytes.Say(`flannel-launcher wait-ready --config FILE --status FILE \[--timeout 60s\]`))
	})

	DescribeTable("exits 2 on a usage error",
		func(message string, args ...string) {
			session := launcher(args...)
			Expect(session).To(gexec.Exit(2))
			Expect(string(session.Err.Contents())).To(SatisfyAll(MatchRegexp(message), ContainSubstring("usage:")))
		},
		Entry("no command", `^usage:`),
		Entry("an unknown command", `unknown command 'start'`, "start"),
		Entry("run without --config", `run: --config is required`, "run"),
		Entry("check without --config", `check: --config is required`, "check", "--json"),
		Entry("an unknown flag", `run: flag provided but not defined: -verbose`, "run", "--config", "x.json", "--verbose"),
	)

	It("exits 2 when the config file cannot be read", func() {
		session := launcher("run", "--config", "/nonexistent/launcher.json")
		Expect(session).To(gexec.Exit(2))
		Expect(session.Err).To(gbytes.Say(`/nonexistent/launcher.json`))
	})
})
