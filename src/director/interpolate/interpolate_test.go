package interpolate_test

import (
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"go.yaml.in/yaml/v3"

	"github.com/flannel-dns/flannel-dns/src/director/interpolate"
)

func write(dir, name, content string) string {
	path := filepath.Join(dir, name)
	Expect(os.WriteFile(path, []byte(content), 0o600)).To(Succeed())
	return path
}

var _ = Describe("bosh int", func() {
	var dir, manifest string

	BeforeEach(func() {
		Expect(interpolate.BoshPath()).To(BeAnExistingFile(), "the bosh CLI is missing: run scripts/build-bosh-cli")
		dir = GinkgoT().TempDir()
		manifest = write(dir, "m.yml", "name: demo\nsecret: ((pass))\nvariables:\n- {name: pass, type: password}\n")
	})

	It("applies ops-files in order and leaves variables alone", func() {
		first := write(dir, "a.yml", "- type: replace\n  path: /extra?\n  value: 1\n")
		second := write(dir, "b.yml", "- {type: replace, path: /extra, value: 2}\n")
		out, err := interpolate.Manifest(interpolate.BoshPath(), manifest, first, second)
		Expect(err).NotTo(HaveOccurred())
		var m map[string]any
		Expect(yaml.Unmarshal(out, &m)).To(Succeed())
		Expect(m).To(HaveKeyWithValue("extra", 2))
		Expect(m).To(HaveKeyWithValue("secret", "((pass))"))
	})

	It("says which ops-file failed and why", func() {
		bad := write(dir, "bad.yml", "- {type: replace, path: /missing/key, value: 1}\n")
		_, err := interpolate.Manifest(interpolate.BoshPath(), manifest, bad)
		Expect(err).To(MatchError(And(ContainSubstring("bad.yml"), ContainSubstring("missing"))))
	})

	It("generates variables into a vars store once and reuses them", func() {
		store := filepath.Join(dir, "creds.yml")
		read := func() string {
			out, err := interpolate.WithVarsStore(interpolate.BoshPath(), manifest, store)
			Expect(err).NotTo(HaveOccurred())
			var m map[string]any
			Expect(yaml.Unmarshal(out, &m)).To(Succeed())
			return m["secret"].(string)
		}
		first := read()
		Expect(first).NotTo(BeEmpty())
		Expect(first).NotTo(ContainSubstring("(("))
		Expect(read()).To(Equal(first))
	})
})

var _ = Describe("BoshPath", func() {
	It("follows FLANNEL_DNS_CACHE", func() {
		GinkgoT().Setenv("FLANNEL_DNS_CACHE", "/somewhere")
		Expect(interpolate.BoshPath()).To(Equal("/somewhere/bin/bosh"))
		GinkgoT().Setenv("FLANNEL_DNS_CACHE", "")
		Expect(interpolate.BoshPath()).To(Equal("/var/cache/flannel-dns/bin/bosh"))
	})
})
