package spectests_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// bpmView is what bpm-check prints: bpm's own reading of the job's process (its Go field names), and the
// capabilities of the runc spec that bpm builds from it.
type bpmView struct {
	Process struct {
		Name          string
		Executable    string
		Args          []string
		Capabilities  []string
		EphemeralDisk bool
		Unsafe        *struct {
			Privileged          bool
			UnrestrictedVolumes []struct {
				Path      string
				Writable  bool
				MountOnly bool
			}
		}
	}
	Capabilities struct {
		Bounding []string `json:"bounding"`
	}
}

// buildBPMCheck builds bpm-check (scripts/build-bpm-check) and returns its path.
func buildBPMCheck() string {
	out, err := exec.Command("../scripts/build-bpm-check").Output()
	Expect(err).NotTo(HaveOccurred(), "scripts/build-bpm-check: %s", stderrOf(err))
	return strings.TrimSpace(string(out))
}

// checkBPM runs bpm's parser and validation (bpm-check) on a rendered bpm.yml of the flanneld job.
func checkBPM(content []byte) (bpmView, error) {
	path := filepath.Join(GinkgoT().TempDir(), "bpm.yml")
	Expect(os.WriteFile(path, content, 0o644)).To(Succeed())
	out, err := exec.Command(bpmCheck, "flanneld", path).Output()
	if err != nil {
		return bpmView{}, fmt.Errorf("%w: %s", err, stderrOf(err))
	}
	var view bpmView
	Expect(json.Unmarshal(out, &view)).To(Succeed())
	return view, nil
}

func stderrOf(err error) string {
	if exitErr, ok := err.(*exec.ExitError); ok {
		return strings.TrimSpace(string(exitErr.Stderr))
	}
	return ""
}

var _ = Describe("flanneld's bpm.yml, read by bpm 1.4.38's own code", func() {
	It("is valid for bpm, and strictly so, whatever the properties", func() {
		variants := map[string][]string{} // bpm.yml -> the sets of properties that render it
		for _, dotted := range propertyVariants() {
			rendered, err := renderer.RenderFile(flanneld, "config/bpm.yml", withTLS(dotted), worker(0))
			Expect(err).NotTo(HaveOccurred())
			variants[string(rendered)] = append(variants[string(rendered)], fmt.Sprint(dotted))
		}
		for content, properties := range variants {
			_, err := checkBPM([]byte(content))
			Expect(err).NotTo(HaveOccurred(), "bpm.yml rendered with properties %s is not valid for bpm", strings.Join(properties, ", "))
		}
	})

	It("grants only capabilities that runc, which bpm runs the job with, knows", func() {
		out, err := exec.Command("runc", "features").Output()
		Expect(err).NotTo(HaveOccurred(), "runc features (scripts/setup installs runc): %s", stderrOf(err))
		var features struct {
			Linux struct{ Capabilities []string }
		}
		Expect(json.Unmarshal(out, &features)).To(Succeed())
		Expect(features.Linux.Capabilities).To(ContainElement("CAP_NET_ADMIN"), "runc lists its capabilities")
		rendered, err := renderer.Render(flanneld, withTLS(nil), worker(0))
		Expect(err).NotTo(HaveOccurred())

		view, err := checkBPM(rendered.Files["config/bpm.yml"])

		Expect(err).NotTo(HaveOccurred())
		Expect(view.Capabilities.Bounding).NotTo(BeEmpty())
		for _, capability := range view.Capabilities.Bounding {
			Expect(slices.Contains(features.Linux.Capabilities, capability)).To(BeTrue(), "runc does not know %s", capability)
		}
	})

	// The checker itself: each mistake here is one it must catch.
	DescribeTable("bpm-check refuses a bpm.yml that bpm would refuse or misread",
		func(content, fragment string) {
			_, err := checkBPM([]byte(content))
			Expect(err).To(MatchError(ContainSubstring(fragment)))
		},
		Entry("a misspelt key, which bpm's parser drops", "processes:\n- name: flanneld\n  executable: /bin/true\n  capabilites: [NET_ADMIN]\n",
			"field capabilites not found"),
		Entry("a misspelt key under unsafe", "processes:\n- name: flanneld\n  executable: /bin/true\n  unsafe:\n    unrestricted_volume:\n    - path: /run/flannel\n",
			"field unrestricted_volume not found"),
		Entry("not YAML", "processes: [", "bpm's parser"),
		Entry("an additional volume outside /var/vcap", "processes:\n- name: flanneld\n  executable: /bin/true\n  additional_volumes:\n  - path: /etc\n",
			"must be within /var/vcap"),
		Entry("no process named like the job", "processes:\n- name: flannel\n  executable: /bin/true\n", `no process named "flanneld"`),
		Entry("a memory limit bpm cannot read", "processes:\n- name: flanneld\n  executable: /bin/true\n  limits:\n    memory: lots\n",
			"bpm's runc spec"),
	)
})

// propertyVariants are the job's properties at their defaults, each settable property changed on its own, and
// the values that templates branch on.
func propertyVariants() []map[string]interface{} {
	variants := []map[string]interface{}{nil, {"backend-type": "udp"}}
	for name, c := range settableProperties {
		variants = append(variants, map[string]interface{}{name: c.value})
	}
	return variants
}
