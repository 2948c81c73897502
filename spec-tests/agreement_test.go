package spectests_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/netip"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/config"
)

// The template and the launcher's config loader both check what the template passes on. A value that the
// template takes and the loader refuses passes `bosh deploy`'s render and stops the canary's flanneld at
// post-start instead; one that the template refuses and the loader takes is refused for nothing. The spec
// below gives both the same values, a corpus of tricky ones, generated ones (from a fixed seed, so that every
// run tries the same) and pairs of one group's properties set together, and fails on any that one takes and
// the other refuses.

// checkedTwice is a property that the template checks and passes on to the launcher, which checks it again.
type checkedTwice struct {
	key string // where the launcher reads it
	// group names the properties that one check looks at together (a network and its subnet length): each
	// batch varies one property of a group, and a refusal counts for the group.
	group string
	// onPurpose starts the template's message when it refuses, by design, a value that the launcher takes.
	onPurpose string
	corpus    []any
	generate  func(*rand.Rand) any
}

const (
	// valuesPerGroup is how many values a group gets, corpus first, generated ones after: the batches, each
	// one render, are as many as the largest group has values.
	valuesPerGroup = 36
	// corpusSeed seeds the generated values, so that every run tries the same ones and a failure repeats;
	// AGREEMENT_SEED=<number> tries others (the seed is in the report and in a failure's message).
	corpusSeed uint64 = 7
	// strangers: characters that look like what a property wants, or that Ruby and Go treat differently.
	strangers = " \t\n\v\r\x00\x01\x1b\x7f\u0085\u009b\u00a0\u00b5\u03bc\u017f\u212a\u0663"
)

var (
	durationCorpus = []any{"5m", "1m30s", "0s", "0", "-1s", "+5s", ".5s", "5.s", ".s", "5", "1.5h", "1\u00b5s",
		"1\u03bcs", "1us", "1ns", "0.5ns", "0.0000000001s", "9999999999h", "2562047h47m16.854775807s",
		"2562047h47m16.854775808s", "9223372036854775807ns", "9223372036854775808ns", "-9223372036854775808ns",
		"1h-1m", "1e3s", "1 s", " 5s ", "5s\n", "", "1d", "1..5s", "00005s", "1.000000000000000000000001s",
		"0.99999999999999999999h", "5S", 5}
	backoffCorpus = []any{"250ms", "249ms", "10s", "10.000000001s", "1ns", "2562047h"}
	// subnetLens are the subnet lengths tried with a network of each length: at, one past, and after /30.
	subnetLens = func(bits int) []any { return []any{bits, bits + 1, 31, strconv.Itoa(bits + 1)} }
	addrChars  = "0123456789.:[]%abcdefABCDEF/-x"
)

var checkedTwiceProperties = map[string]checkedTwice{
	"pod-network-cidr": {key: "network.cidr", group: "network", corpus: []any{"10.200.0.0/16", "198.18.0.0/15",
		"10.200.0.0", "10.200.0.1/16", "fd00::/8", "010.200.0.0/16", "10.200.0.0/016", "10.200.0.0/33",
		"0.0.0.0/0", "10.200.0.0/24", "10.200.0.0/ 16", " 10.200.0.0/16 ", "::ffff:10.200.0.0/112",
		"10.200.0.0/8", "255.255.255.252/30", "10.200.0.0/16/16"},
		generate: oneOf(mutated(addrChars, "10.200.0.0/16", "198.18.0.0/15", "0.0.0.0/0"),
			withSuffix(dottedQuads, "/", "0", "8", "15", "16", "23", "32", "33", "016"))},
	"subnet-len": {key: "network.subnet_len", group: "network", corpus: []any{17, 16, 24, 30, 31, 0, -1, "24", "x", 24.5},
		generate: wholeNumbers(0, 16, 24, 30)},
	"backend-type": {key: "network.backend_type", group: "backend", onPurpose: "backend-type cannot be",
		corpus: []any{"vxlan", "host-gw", "udp", "ipsec", "wireguard", "ipip", "alloc", "VXLAN", "", " vxlan ",
			"vxlan\n", "gre", "extension", 1},
		generate: mutated("abcghilnopsuvwx-", "vxlan", "host-gw", "wireguard", "ipip", "alloc")},
	"vni": {key: "network.vni", group: "backend", corpus: []any{0, 1, 16777215, 16777216, -1, "4096", 4096.5, "x", true},
		generate: wholeNumbers(0, 1, 16777215, 1<<40)},
	"port": {key: "network.port", corpus: []any{0, 1, 8472, 65535, 65536, -1, "8472", "x", json.Number("8.472e3")},
		generate: wholeNumbers(0, 1, 8472, 65535)},
	"enforce-network-config": {key: "network.enforce", corpus: []any{true, false, "true", "false", 0, 1, "yes", ""}},
	"etcd.alias": {key: "etcd.alias", corpus: []any{"etcd.cfcr.internal", "etcd.cfcr.internal.", "ETCD.Cfcr.Internal",
		"192.0.2.1", "192.0.2.1.", "01.2.3.4", "1.2.3", "256.1.1.1", "::1", "[::1]", "etcd..internal", ".etcd",
		"-etcd.x", "etcd-.x", "etcd_x.internal", "a", "1", "1.", strings.Repeat("a", 63) + ".x", strings.Repeat("a", 64) + ".x",
		longName(253), longName(253) + ".", longName(254), "etcd.cfcr.internal\u017f", "\u212aubo.internal",
		"etcd .x", " etcd.x ", "etcd.x\n", "", "etcd.cfcr.internal..", "*.etcd", 5},
		generate: oneOf(dnsNames, dottedQuads, mutated("abz09-._", "etcd.cfcr.internal", "192.0.2.1"))},
	"etcd.port": {key: "etcd.port", corpus: []any{0, 1, 2379, 65535, 65536, -1, "2379", " 2379", "0x95b", 2379.5,
		json.Number("2.379e3"), true, ""},
		generate: wholeNumbers(0, 1, 2379, 65535, 1<<40)},
	"etcd.prefix": {key: "etcd.prefix", corpus: []any{"/coreos.com/network", "/", "//", "/a//b", "/a/", "a/b", "/a b",
		"/a\tb", "/a\vb", "/a\rb", " /a", "/a ", "/a\u00a0b", "/\u00e4", "/a\x00b", "", "/.", "/a/../b", "/a\x00",
		"/a\x01b", "/a\x1b[2J", "/a\x7f", "/a\u0085b", "/a\u009bb", "/a\u00a0", "/a\u2028b"},
		generate: mutated("/abc.-_", "/coreos.com/network", "/a")},
	"etcd.dns-server": {key: "dns.server", corpus: []any{"", "169.254.0.2:53", "999.1.1.1:53", "1.2.3.4:99999",
		"01.2.3.4:53", "1.2.3.4:0", "1.2.3.4:053", "1.2.3.4:65535", "1.2.3.4:65536", "[::1]:53",
		"[fe80::1%eth0]:53", "[192.0.2.1]:53", "[::ffff:192.0.2.1]:53", "::1:53", "[::1]", "1.2.3.4", "1.2.3.4:",
		":53", "[1:2:3:4:5:6:7:8]:53", "[1:2:3:4:5:6:7::]:53", "[::1.2.3.4]:53", "[1::2::3]:53", "[2001:DB8::1]:53",
		"1.2.3.4:+53", "1.2.3.4:\u0665\u0663", "localhost:53", " 1.2.3.4:53 ", "1.2.3.4:000000000000053"},
		generate: oneOf(mutated(addrChars, "169.254.0.2:53", "[2001:db8::1]:53", "[::ffff:192.0.2.1]:53"),
			withSuffix(dottedQuads, ":", "0", "53", "65535", "65536"),
			withSuffix(bracketed(ipv6ish), ":", "53", "0"))},
	"iface": {key: "flanneld.iface", corpus: []any{"", "eth0", "eth0,eth1", "eth 0", "eth0\v", "eth\f0", " eth0 ",
		"eth\u00a00", "192.0.2.7", "a\rb", "eth0\x00", "et\x00h0", "eth\x7f0", "eth\u00850", "eth0\x1b", "eth\u00e40"},
		generate: mutated("eth0,. ", "eth0", "192.0.2.7")},
	"public-ip": {key: "flanneld.public_ip", corpus: []any{"", "192.0.2.7", "2001:db8::1", "fe80::1%eth0",
		"::ffff:192.0.2.7", "192.0.2", "192.0.2.256", "01.2.3.4", "192.0.2.7/32", "[::1]", "0.0.0.0",
		"255.255.255.255", " 192.0.2.7 ", "192.0.2.7\n", "1.2.3.4.5", "::", "1.2.3.04"},
		generate: oneOf(dottedQuads, ipv6ish, mutated(addrChars, "192.0.2.7", "2001:db8::1"))},
	"ip-masq": {key: "flanneld.ip_masq", corpus: []any{true, false, "true", "false", 0, 1, "yes", ""}},
	"subnet-file": {key: "flanneld.published_subnet_file", onPurpose: "subnet-file must name a file directly in /run/flannel",
		corpus: []any{"/run/flannel/subnet.env", "/run/flannel/other.env", "/run/flannel/../x", "/run/flannel/",
			"/etc/x", "subnet.env", "/run/flannel/a b", "/run/flannel//x", "/run/flannel/.hidden", "/run/flannel/x."},
		generate: mutated("/abc.-_", "/run/flannel/subnet.env")},
	"launcher.startup-deadline": {key: "timing.startup_deadline", corpus: durationCorpus, generate: goDurations},
	// The same check as the startup deadline's on both sides: generated values only.
	"launcher.dns-timeout":      {key: "timing.dns_timeout", generate: goDurations},
	"launcher.probe-timeout":    {key: "timing.probe_timeout", generate: goDurations},
	"launcher.resolve-interval": {key: "timing.resolve_interval", generate: goDurations},
	"launcher.backoff-initial": {key: "timing.backoff_initial", group: "backoff", corpus: backoffCorpus,
		generate: goDurations},
	"launcher.backoff-max": {key: "timing.backoff_max", group: "backoff", corpus: backoffCorpus,
		generate: goDurations},
}

var _ = Describe("the template's checks and the launcher's", func() {
	It("cover every property that the template passes to the launcher", func() {
		for name := range flanneld.Properties {
			switch field, isTLS := strings.CutPrefix(name, "tls.etcdctl."); {
			case isTLS: // rendered into files, which tls_agreement_test.go has the launcher load
				Expect(tlsFiles).To(HaveKey(field))
			case name != "launcher.ready-timeout": // bin/post-start's, through the duration check the others use
				Expect(checkedTwiceProperties).To(HaveKey(name))
			}
		}
	})

	It("take and refuse the same values", func() {
		defaults, err := renderedDefaults()
		Expect(err).NotTo(HaveOccurred())
		seed := agreementSeed()
		first := batches(append(trials(rand.New(rand.NewPCG(seed, 22))), pairs()...))
		var disagreements []string
		var accepted []trial
		for i, result := range renderAll(first) {
			found, took := sortOut(first[i], result, defaults)
			disagreements, accepted = append(disagreements, found...), append(accepted, took...)
		}
		// What the template took from a batch that it refused for another value, rendered again without it.
		second := batches(accepted)
		for i, result := range renderAll(second) {
			Expect(result.err).NotTo(HaveOccurred(), "the template refused values it took in another batch: %v", second[i])
			disagreements = append(disagreements, launcherRefuses(second[i], result.rendered)...)
		}
		Expect(disagreements).To(BeEmpty(), "%d values (seed %d; AGREEMENT_SEED=%[2]d repeats them):\n%s",
			len(disagreements), seed, strings.Join(disagreements, "\n"))
		AddReportEntry("values", fmt.Sprintf("%d values in %d renders, seed %d", countTrials(first), len(first)+len(second), seed))
	})
})

// agreementSeed is corpusSeed, or AGREEMENT_SEED when set.
func agreementSeed() uint64 {
	value, set := os.LookupEnv("AGREEMENT_SEED")
	if !set {
		return corpusSeed
	}
	seed, err := strconv.ParseUint(value, 10, 64)
	Expect(err).NotTo(HaveOccurred(), "AGREEMENT_SEED must be a whole number")
	return seed
}

var _ = Describe("a value that flanneld gets as an argument", func() {
	// Both took these until 2026-12-06: the render passed, the config loaded, and then every exec of flanneld
	// failed (a NUL in an argument) or it got a key or interface that is not there, monit restarting it for ever.
	DescribeTable("is refused with a control character by the template, on one line, and by the launcher",
		func(property, value, escaped string) {
			_, err := renderConfig(map[string]interface{}{property: value})
			expectFailureNaming(err, property+" must not hold control characters (U+0000 to U+001F, U+007F to U+009F)")
			// bosh's renderer quotes Ruby's message with each backslash doubled.
			Expect(strings.ReplaceAll(err.Error(), `\\`, `\`)).To(ContainSubstring("got '" + escaped + "'"))
			Expect(err.Error()).NotTo(ContainSubstring(value), "the value is quoted with escapes")

			defaults, err := renderedDefaults()
			Expect(err).NotTo(HaveOccurred())
			key := checkedTwiceProperties[property].key
			problems := launcherProblems(placed(defaults, map[string]any{key: value}))
			Expect(problems).To(HaveKeyWithValue(key, ContainSubstring("must not hold control characters")))
		},
		Entry("a NUL in etcd.prefix", "etcd.prefix", "/coreos.com\x00/network", `/coreos.com\x00/network`),
		Entry("ESC in etcd.prefix", "etcd.prefix", "/coreos.com/\x1b[2J", `/coreos.com/\e[2J`),
		Entry("DEL in etcd.prefix", "etcd.prefix", "/coreos.com/net\x7fwork", `/coreos.com/net\x7Fwork`),
		Entry("a C1 control in etcd.prefix", "etcd.prefix", "/coreos.com/\u0085network", `/coreos.com/\u0085network`),
		Entry("a newline in etcd.prefix", "etcd.prefix", "/coreos.com\n/network", `/coreos.com\n/network`),
		Entry("a NUL in iface", "iface", "eth\x000", `eth\x000`),
		Entry("a bell in iface", "iface", "eth\a0", `eth\a0`),
		Entry("a C1 control in iface", "iface", "eth\u009b0", `eth\u009B0`),
	)
})

// placed is the rendered defaults with values set at the launcher's keys.
func placed(defaults []byte, values map[string]any) []byte {
	var doc map[string]any
	Expect(json.Unmarshal(defaults, &doc)).To(Succeed())
	for key, value := range values {
		section, name, _ := strings.Cut(key, ".")
		doc[section].(map[string]any)[name] = value
	}
	data, err := json.Marshal(doc)
	Expect(err).NotTo(HaveOccurred())
	return data
}

// sortOut tells the disagreements in a batch's render, and which values of it the template took from a batch
// it refused, to be rendered again.
func sortOut(batch []trial, result renderResult, defaults []byte) (disagreements []string, took []trial) {
	if result.err == nil {
		return launcherRefuses(batch, result.rendered), nil
	}
	var refused []trial
	for _, t := range batch {
		if t.blamedIn(result.err.Error()) {
			refused = append(refused, t)
		} else {
			took = append(took, t)
		}
	}
	Expect(refused).NotTo(BeEmpty(), "a render failed without naming a property: %s", result.err)
	return launcherTakes(defaults, refused, result.err.Error()), took
}

// trial is one value of one property, or values of properties of one group set together (pairs).
type trial struct {
	property string
	value    any
	with     map[string]any // other properties of property's group, and their values
}

// assignments are the trial's properties and their values.
func (t trial) assignments() map[string]any {
	all := map[string]any{t.property: t.value}
	maps.Copy(all, t.with)
	return all
}

func (t trial) String() string {
	var parts []string
	for name, value := range t.assignments() {
		text, _ := json.Marshal(value)
		parts = append(parts, name+" = "+string(text))
	}
	slices.Sort(parts)
	return strings.Join(parts, ", ")
}

// groupOf is the group of a property: the name of its group, or its own.
func groupOf(property string) string {
	if group := checkedTwiceProperties[property].group; group != "" {
		return group
	}
	return property
}

// ofGroup are the properties of a group.
func ofGroup(group string) []checkedTwice {
	var found []checkedTwice
	for name, p := range checkedTwiceProperties {
		if groupOf(name) == group {
			found = append(found, p)
		}
	}
	return found
}

// blamedIn tells whether the template's error names a property of t's group.
func (t trial) blamedIn(message string) bool {
	for name := range checkedTwiceProperties {
		if groupOf(name) == groupOf(t.property) &&
			(strings.Contains(message, "properties: "+name+" ") || strings.Contains(message, "; "+name+" ")) {
			return true
		}
	}
	return false
}

// launcherKeys are the keys under which the launcher may refuse t.
func (t trial) launcherKeys() []string {
	var keys []string
	for _, p := range ofGroup(groupOf(t.property)) {
		keys = append(keys, p.key)
	}
	return keys
}

// trials are every property's corpus and generated values, valuesPerGroup a group.
func trials(r *rand.Rand) []trial {
	var all []trial
	for _, name := range slices.Sorted(maps.Keys(checkedTwiceProperties)) {
		p := checkedTwiceProperties[name]
		for _, value := range p.corpus {
			all = append(all, trial{property: name, value: value})
		}
		for n := len(p.corpus); p.generate != nil && n < valuesPerGroup/len(ofGroup(groupOf(name))); n++ {
			all = append(all, trial{property: name, value: p.generate(r)})
		}
	}
	return all
}

// pairs vary two properties of a group together, where the check of one depends on the other: a network of
// each length with subnet lengths about it, every backend with VNIs, first and longest backoffs.
func pairs() []trial {
	var all []trial
	for _, bits := range []int{0, 8, 15, 16, 24, 29, 30, 32} {
		network := netip.PrefixFrom(netip.MustParseAddr("198.18.0.0"), bits).Masked().String()
		for _, subnetLen := range subnetLens(bits) {
			all = append(all, trial{property: "pod-network-cidr", value: network, with: map[string]any{"subnet-len": subnetLen}})
		}
	}
	// A network that both refuse: the template must not blame a subnet length that is fine for some network.
	for _, subnetLen := range []any{1, 16, 17} {
		all = append(all, trial{property: "pod-network-cidr", value: "198.18.0.1/16", with: map[string]any{"subnet-len": subnetLen}})
	}
	for _, backend := range []any{"vxlan", "host-gw", "wireguard", "alloc", "udp", "VXLAN", ""} {
		for _, vni := range []any{0, 1, 16777216, -1, "4096"} {
			all = append(all, trial{property: "backend-type", value: backend, with: map[string]any{"vni": vni}})
		}
	}
	for _, initial := range []any{"250ms", "10s", "1ns", "2562047h"} {
		for _, longest := range []any{"249ms", "10s", "10.000000001s", "1ns"} {
			all = append(all, trial{property: "launcher.backoff-initial", value: initial,
				with: map[string]any{"launcher.backoff-max": longest}})
		}
	}
	return all
}

// batches put trials together so that no two of a batch are of the same group.
func batches(trials []trial) [][]trial {
	var all [][]trial
	used := map[string]int{}
	for _, t := range trials {
		i := used[groupOf(t.property)]
		used[groupOf(t.property)]++
		if i == len(all) {
			all = append(all, nil)
		}
		all[i] = append(all[i], t)
	}
	return all
}

func countTrials(batches [][]trial) int {
	n := 0
	for _, batch := range batches {
		n += len(batch)
	}
	return n
}

type renderResult struct {
	rendered []byte
	err      error
}

// renderAll renders the launcher's config for each batch, as many at once as there are CPUs.
func renderAll(batches [][]trial) []renderResult {
	results := make([]renderResult, len(batches))
	next := make(chan int)
	var wg sync.WaitGroup
	for range runtime.NumCPU() {
		wg.Go(func() {
			for i := range next {
				dotted := map[string]interface{}{}
				for _, t := range batches[i] {
					maps.Copy(dotted, t.assignments())
				}
				results[i].rendered, results[i].err = renderConfig(dotted)
			}
		})
	}
	for i := range batches {
		next <- i
	}
	close(next)
	wg.Wait()
	return results
}

// launcherRefuses gives the launcher the config that the template rendered from batch, and tells each value
// it refuses.
func launcherRefuses(batch []trial, rendered []byte) []string {
	problems := launcherProblems(rendered)
	var found []string
	for _, t := range batch {
		for _, key := range t.launcherKeys() {
			if problem, ok := problems[key]; ok {
				found = append(found, fmt.Sprintf("%s: the template takes it, the launcher refuses it: %s", t, problem))
				delete(problems, key)
			}
		}
	}
	for _, problem := range problems {
		found = append(found, fmt.Sprintf("the launcher refuses what the template rendered from %v: %s", batch, problem))
	}
	return found
}

// launcherTakes gives the launcher the values the template refused, put where the template would have put
// them, and tells each one it takes.
func launcherTakes(defaults []byte, refused []trial, message string) []string {
	values := map[string]any{}
	for _, t := range refused {
		for name, value := range t.assignments() {
			values[checkedTwiceProperties[name].key] = asTheTemplatePassesIt(value)
		}
	}
	problems := launcherProblems(placed(defaults, values))
	var found []string
	for _, t := range refused {
		if slices.ContainsFunc(t.launcherKeys(), func(key string) bool { _, ok := problems[key]; return ok }) ||
			t.refusedOnPurpose(message) {
			continue
		}
		found = append(found, fmt.Sprintf("%s: the template refuses it, the launcher takes it: %s", t, excerptFor(message, t)))
	}
	return found
}

// refusedOnPurpose tells whether the template's message is the refusal, by design, of one of t's values.
func (t trial) refusedOnPurpose(message string) bool {
	for name := range t.assignments() {
		if onPurpose := checkedTwiceProperties[name].onPurpose; onPurpose != "" && strings.Contains(message, onPurpose) {
			return true
		}
	}
	return false
}

// asTheTemplatePassesIt is a string stripped of what Ruby's String#strip takes off; anything else as it is.
func asTheTemplatePassesIt(value any) any {
	if s, ok := value.(string); ok {
		return strings.Trim(s, "\x00\t\n\v\f\r ")
	}
	return value
}

// launcherProblems are the loader's problems with a config, by key.
func launcherProblems(data []byte) map[string]string {
	problems := map[string]string{}
	_, err := config.Parse(data)
	var invalid *config.InvalidError
	if err == nil || !errors.As(err, &invalid) {
		Expect(err).NotTo(HaveOccurred())
		return problems
	}
	for _, problem := range invalid.Problems {
		key, _, _ := strings.Cut(problem, ":")
		problems[key] = problem
	}
	return problems
}

// excerptFor is the template's problem with t's group, out of its whole message.
func excerptFor(message string, t trial) string {
	for name := range checkedTwiceProperties {
		for _, before := range []string{"properties: ", "; "} {
			if i := strings.Index(message, before+name+" "); i >= 0 && groupOf(name) == groupOf(t.property) {
				problem := message[i+len(before):]
				if end := strings.IndexAny(problem, ";>"); end >= 0 {
					problem = problem[:end]
				}
				return problem
			}
		}
	}
	return message
}

// The generators below make values near what a property wants, to find where the two checks part.

func oneOf(generators ...func(*rand.Rand) any) func(*rand.Rand) any {
	return func(r *rand.Rand) any { return generators[r.IntN(len(generators))](r) }
}

// mutated changes one of seeds in one to three places: a character inserted, replaced or removed, taken from
// alphabet or the strangers.
func mutated(alphabet string, seeds ...string) func(*rand.Rand) any {
	chars := []rune(alphabet + strangers)
	return func(r *rand.Rand) any {
		s := []rune(seeds[r.IntN(len(seeds))])
		for n := 1 + r.IntN(3); n > 0; n-- {
			i, c := r.IntN(len(s)+1), chars[r.IntN(len(chars))]
			switch op := r.IntN(3); {
			case op == 0 || i == len(s):
				s = slices.Insert(s, i, c)
			case op == 1:
				s[i] = c
			default:
				s = slices.Delete(s, i, i+1)
			}
		}
		return string(s)
	}
}

// wholeNumbers are near one of bounds: mostly numbers, some quoted as a manifest may, some with a fraction.
func wholeNumbers(bounds ...int) func(*rand.Rand) any {
	return func(r *rand.Rand) any {
		n := bounds[r.IntN(len(bounds))] + r.IntN(5) - 2
		switch r.IntN(6) {
		case 0:
			return strconv.Itoa(n)
		case 1:
			return float64(n) + 0.5
		}
		return n
	}
}

// dottedQuads are three to five numbers up to 300, some with a leading zero, joined by dots.
func dottedQuads(r *rand.Rand) any {
	parts := make([]string, 4)
	if r.IntN(4) == 0 {
		parts = make([]string, 3+r.IntN(3))
	}
	for i := range parts {
		parts[i] = strconv.Itoa(r.IntN(301))
		if r.IntN(10) == 0 {
			parts[i] = "0" + parts[i]
		}
	}
	return strings.Join(parts, ".")
}

// ipv6ish are up to nine groups of up to five hex digits, some with a '::', a dotted quad or a zone.
func ipv6ish(r *rand.Rand) any {
	groups := make([]string, r.IntN(10))
	for i := range groups {
		groups[i] = randomString(r, "0123456789abcdefABCDEFg", r.IntN(6))
	}
	if r.IntN(3) == 0 {
		groups = append(groups, dottedQuads(r).(string))
	}
	s := strings.Join(groups, ":")
	if i := r.IntN(len(s) + 1); r.IntN(2) == 0 {
		s = s[:i] + "::" + s[i:]
	}
	if r.IntN(6) == 0 {
		s += "%eth0"
	}
	return s
}

func bracketed(generate func(*rand.Rand) any) func(*rand.Rand) any {
	return func(r *rand.Rand) any { return "[" + generate(r).(string) + "]" }
}

// withSuffix appends separator and one of suffixes to what generate makes.
func withSuffix(generate func(*rand.Rand) any, separator string, suffixes ...string) func(*rand.Rand) any {
	return func(r *rand.Rand) any {
		return generate(r).(string) + separator + suffixes[r.IntN(len(suffixes))]
	}
}

// dnsNames are one to five labels of up to 64 characters, some all digits, some with a final dot.
func dnsNames(r *rand.Rand) any {
	labels := make([]string, 1+r.IntN(5))
	for i := range labels {
		chars := "az09-"
		if r.IntN(5) == 0 {
			chars = "0123456789"
		}
		labels[i] = randomString(r, chars, r.IntN(65))
	}
	name := strings.Join(labels, ".")
	if r.IntN(4) == 0 {
		name += "."
	}
	return name
}

// longName is a valid DNS name of n characters, n not a multiple of 63.
func longName(n int) string {
	return strings.Repeat(strings.Repeat("a", 62)+".", n/63) + strings.Repeat("b", n%63)
}

// goDurations are one to three numbers of up to 20 digits, some with a fraction, each with a unit Go knows or
// one it does not, some signed; or a corpus value changed in a place or three.
func goDurations(r *rand.Rand) any {
	if r.IntN(3) == 0 {
		return mutatedDurations(r)
	}
	units := []string{"ns", "us", "\u00b5s", "\u03bcs", "ms", "s", "m", "h", "", "d", "S"}
	var b strings.Builder
	if r.IntN(8) == 0 {
		b.WriteString([]string{"+", "-"}[r.IntN(2)])
	}
	for n := 1 + r.IntN(3); n > 0; n-- {
		b.WriteString(randomString(r, "0123456789", r.IntN(21)))
		if r.IntN(3) == 0 {
			b.WriteString("." + randomString(r, "0123456789", r.IntN(22)))
		}
		b.WriteString(units[r.IntN(len(units))])
	}
	return b.String()
}

var mutatedDurations = mutated("0123456789.+-nsu\u00b5mh", "5m", "1m30s", "250ms", "2562047h47m16.854775807s")

func randomString(r *rand.Rand, chars string, n int) string {
	runes := []rune(chars)
	out := make([]rune, n)
	for i := range out {
		out[i] = runes[r.IntN(len(runes))]
	}
	return string(out)
}
