package termtext_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/termtext"
)

var _ = Describe("Escape", func() {
	DescribeTable("writes what a terminal would act on as an escape, and keeps the rest",
		func(in, out string) { Expect(termtext.Escape(in)).To(Equal(out)) },
		Entry("plain text, quotes and letters", `flanneld is "ready": prêt`, `flanneld is "ready": prêt`),
		Entry("a control sequence", "\x1b[2Jcleared", `\x1b[2Jcleared`),
		Entry("a newline that would forge a line", "failed\nflanneld is ready", `failed\nflanneld is ready`),
		Entry("C1's control sequence introducer", "a\u009bb", `a\u009bb`),
		Entry("a right-to-left override", "a\u202eb", `a\u202eb`),
		Entry("a byte that is not UTF-8", "a\xffb", `a\xffb`),
	)
})
