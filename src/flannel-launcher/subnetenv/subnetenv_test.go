package subnetenv_test

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/subnetenv"
)

// flanneldWrote is what flannel 0.28 writes for a vxlan network on a 1500-byte link (pkg/subnet WriteSubnetFile).
const flanneldWrote = "FLANNEL_NETWORK=198.18.0.0/15\nFLANNEL_SUBNET=198.18.3.1/24\nFLANNEL_MTU=1450\nFLANNEL_IPMASQ=true\n"

var flanneldEnv = subnetenv.Env{Network: netip.MustParsePrefix("198.18.0.0/15"),
	Subnet: netip.MustParsePrefix("198.18.3.1/24"), MTU: 1450, IPMasq: true}

// with replaces the line of key in flanneldWrote by line.
func with(key, line string) string {
	var lines []string
	for _, l := range strings.SplitAfter(flanneldWrote, "\n") {
		if strings.HasPrefix(l, key+"=") {
			l = line
		}
		lines = append(lines, l)
	}
	return strings.Join(lines, "")
}

var _ = Describe("Parse", func() {
	It("takes what flanneld writes, and Format writes it back byte for byte", func() {
		env, err := subnetenv.Parse([]byte(flanneldWrote))
		Expect(err).NotTo(HaveOccurred())
		Expect(env).To(Equal(flanneldEnv))
		Expect(string(env.Format())).To(Equal(flanneldWrote))
		Expect(env.String()).To(Equal(strings.ReplaceAll(strings.TrimSpace(flanneldWrote), "\n", " ")))
	})

	It("takes the keys in any order, false, the widest and narrowest MTU, a subnet as wide as the network", func() {
		env, err := subnetenv.Parse([]byte("FLANNEL_IPMASQ=false\nFLANNEL_MTU=65535\nFLANNEL_SUBNET=198.18.0.1/15\n" +
			"FLANNEL_NETWORK=198.18.0.0/15\n"))
		Expect(err).NotTo(HaveOccurred())
		Expect(env).To(Equal(subnetenv.Env{Network: flanneldEnv.Network, Subnet: netip.MustParsePrefix("198.18.0.1/15"),
			MTU: 65535, IPMasq: false}))
		Expect(subnetenv.Parse([]byte(with("FLANNEL_MTU", "FLANNEL_MTU=576\n")))).To(HaveField("MTU", 576))
	})

	DescribeTable("refuses what flanneld does not write, naming the line or key",
		func(content, message string) {
			_, err := subnetenv.Parse([]byte(content))
			Expect(err).To(MatchError(message))
		},
		Entry("a network with host bits", with("FLANNEL_NETWORK", "FLANNEL_NETWORK=198.18.1.0/15\n"),
			`FLANNEL_NETWORK must be an IPv4 network such as 10.200.0.0/16, got "198.18.1.0/15"`),
		Entry("a network without a length", with("FLANNEL_NETWORK", "FLANNEL_NETWORK=198.18.0.0\n"),
			`FLANNEL_NETWORK must be an IPv4 network such as 10.200.0.0/16, got "198.18.0.0"`),
		Entry("an IPv6 network", with("FLANNEL_NETWORK", "FLANNEL_NETWORK=fd00::/8\n"),
			`FLANNEL_NETWORK must be an IPv4 network such as 10.200.0.0/16, got "fd00::/8"`),
		Entry("an IPv4 network written as IPv6", with("FLANNEL_NETWORK", "FLANNEL_NETWORK=::ffff:198.18.0.0/111\n"),
			`FLANNEL_NETWORK must be an IPv4 network such as 10.200.0.0/16, got "::ffff:198.18.0.0/111"`),
		Entry("a network length with a leading zero", with("FLANNEL_NETWORK", "FLANNEL_NETWORK=198.18.0.0/015\n"),
			`FLANNEL_NETWORK must be an IPv4 network such as 10.200.0.0/16, got "198.18.0.0/015"`),
		Entry("a network with a space", with("FLANNEL_NETWORK", "FLANNEL_NETWORK= 198.18.0.0/15\n"),
			`FLANNEL_NETWORK must be an IPv4 network such as 10.200.0.0/16, got " 198.18.0.0/15"`),
		Entry("a network in quotes", with("FLANNEL_NETWORK", "FLANNEL_NETWORK=\"198.18.0.0/15\"\n"),
			`FLANNEL_NETWORK must be an IPv4 network such as 10.200.0.0/16, got "\"198.18.0.0/15\""`),
		Entry("a subnet outside the network", with("FLANNEL_SUBNET", "FLANNEL_SUBNET=192.0.2.1/24\n"),
			`FLANNEL_SUBNET must be an address of 198.18.0.0/15 with the subnet's length, such as 198.18.0.1/24, got "192.0.2.1/24"`),
		Entry("a subnet wider than the network", with("FLANNEL_SUBNET", "FLANNEL_SUBNET=198.18.3.1/8\n"),
			`FLANNEL_SUBNET must be an address of 198.18.0.0/15 with the subnet's length, such as 198.18.0.1/24, got "198.18.3.1/8"`),
		Entry("a subnet without a length", with("FLANNEL_SUBNET", "FLANNEL_SUBNET=198.18.3.1\n"),
			`FLANNEL_SUBNET must be an address of 198.18.0.0/15 with the subnet's length, such as 198.18.0.1/24, got "198.18.3.1"`),
		Entry("a subnet with a leading zero", with("FLANNEL_SUBNET", "FLANNEL_SUBNET=198.18.03.1/24\n"),
			`FLANNEL_SUBNET must be an address of 198.18.0.0/15 with the subnet's length, such as 198.18.0.1/24, got "198.18.03.1/24"`),
		Entry("an MTU below the datagram every IPv4 host takes whole", with("FLANNEL_MTU", "FLANNEL_MTU=575\n"),
			`FLANNEL_MTU must be a whole number from 576 to 65535, got "575"`),
		Entry("IPv4's smallest MTU", with("FLANNEL_MTU", "FLANNEL_MTU=68\n"),
			`FLANNEL_MTU must be a whole number from 576 to 65535, got "68"`),
		Entry("loopback's MTU, more than a veth takes", with("FLANNEL_MTU", "FLANNEL_MTU=65536\n"),
			`FLANNEL_MTU must be a whole number from 576 to 65535, got "65536"`),
		Entry("an MTU above the largest", with("FLANNEL_MTU", "FLANNEL_MTU=65537\n"),
			`FLANNEL_MTU must be a whole number from 576 to 65535, got "65537"`),
		Entry("an MTU of zero", with("FLANNEL_MTU", "FLANNEL_MTU=0\n"),
			`FLANNEL_MTU must be a whole number from 576 to 65535, got "0"`),
		Entry("an MTU with a leading zero", with("FLANNEL_MTU", "FLANNEL_MTU=01450\n"),
			`FLANNEL_MTU must be a whole number from 576 to 65535, got "01450"`),
		Entry("an MTU with a sign", with("FLANNEL_MTU", "FLANNEL_MTU=+1450\n"),
			`FLANNEL_MTU must be a whole number from 576 to 65535, got "+1450"`),
		Entry("an MTU with a trailing space", with("FLANNEL_MTU", "FLANNEL_MTU=1450 \n"),
			`FLANNEL_MTU must be a whole number from 576 to 65535, got "1450 "`),
		Entry("an MTU with more words", with("FLANNEL_MTU", "FLANNEL_MTU=1450 --debug\n"),
			`FLANNEL_MTU must be a whole number from 576 to 65535, got "1450 --debug"`),
		Entry("an empty MTU", with("FLANNEL_MTU", "FLANNEL_MTU=\n"),
			`FLANNEL_MTU must be a whole number from 576 to 65535, got ""`),
		Entry("ip masquerading as 1", with("FLANNEL_IPMASQ", "FLANNEL_IPMASQ=1\n"),
			`FLANNEL_IPMASQ must be true or false, got "1"`),
		Entry("ip masquerading as True", with("FLANNEL_IPMASQ", "FLANNEL_IPMASQ=True\n"),
			`FLANNEL_IPMASQ must be true or false, got "True"`),
		Entry("a command substitution", with("FLANNEL_MTU", "FLANNEL_MTU=$(touch /tmp/owned)\n"),
			`FLANNEL_MTU must be a whole number from 576 to 65535, got "$(touch /tmp/owned)"`),
		Entry("backticks", with("FLANNEL_SUBNET", "FLANNEL_SUBNET=`id`\n"),
			"FLANNEL_SUBNET must be an address of 198.18.0.0/15 with the subnet's length, such as 198.18.0.1/24, got \"`id`\""),
		Entry("a semicolon and a second command", with("FLANNEL_IPMASQ", "FLANNEL_IPMASQ=true; id\n"),
			`FLANNEL_IPMASQ must be true or false, got "true; id"`),
		Entry("a command on a line of its own", flanneldWrote+"id\n",
			`line 5: "id" is not one of FLANNEL_NETWORK=, FLANNEL_SUBNET=, FLANNEL_MTU=, FLANNEL_IPMASQ=`),
		Entry("another variable", flanneldWrote+"PATH=/tmp\n",
			`line 5: "PATH=/tmp" is not one of FLANNEL_NETWORK=, FLANNEL_SUBNET=, FLANNEL_MTU=, FLANNEL_IPMASQ=`),
		Entry("flannel's IPv6 keys", flanneldWrote+"FLANNEL_IPV6_NETWORK=fd00::/8\n",
			`line 5: "FLANNEL_IPV6_NETWORK=fd00::/8" is not one of FLANNEL_NETWORK=, FLANNEL_SUBNET=, FLANNEL_MTU=, FLANNEL_IPMASQ=`),
		Entry("an export", "export "+flanneldWrote,
			`line 1: "export FLANNEL_NETWORK=198.18.0.0/15" is not one of FLANNEL_NETWORK=, FLANNEL_SUBNET=, FLANNEL_MTU=, FLANNEL_IPMASQ=`),
		Entry("a comment", "# flannel\n"+flanneldWrote,
			`line 1: "# flannel" is not one of FLANNEL_NETWORK=, FLANNEL_SUBNET=, FLANNEL_MTU=, FLANNEL_IPMASQ=`),
		Entry("an empty line", "\n"+flanneldWrote,
			`line 1: "" is not one of FLANNEL_NETWORK=, FLANNEL_SUBNET=, FLANNEL_MTU=, FLANNEL_IPMASQ=`),
		Entry("carriage returns", strings.ReplaceAll(flanneldWrote, "\n", "\r\n"),
			`FLANNEL_NETWORK must be an IPv4 network such as 10.200.0.0/16, got "198.18.0.0/15\r"`),
		Entry("a NUL byte", with("FLANNEL_IPMASQ", "FLANNEL_IPMASQ=true\x00\n"),
			`FLANNEL_IPMASQ must be true or false, got "true\x00"`),
		Entry("a key given twice", flanneldWrote+"FLANNEL_MTU=1450\n", `line 5: FLANNEL_MTU is set a second time`),
		Entry("a key missing", with("FLANNEL_IPMASQ", ""), `FLANNEL_IPMASQ is missing`),
		Entry("no newline at the end", strings.TrimSuffix(flanneldWrote, "\n"), `the last line does not end with a newline`),
		Entry("nothing", "", `the last line does not end with a newline`),
		Entry("more than 512 bytes", flanneldWrote+strings.Repeat("#", 512), `larger than 512 bytes`),
	)
})

var _ = Describe("Parse of a network or subnet that is all of IPv4 or takes in addresses a node keeps to itself", func() {
	DescribeTable("refuses it, naming the key and the value",
		func(key, value, rule string) {
			_, err := subnetenv.Parse([]byte(with(key, key+"="+value+"\n")))
			Expect(err).To(MatchError(fmt.Sprintf("%s must not %s, got %q", key, rule, value)))
		},
		Entry("a network of all IPv4", "FLANNEL_NETWORK", "0.0.0.0/0", "be all of IPv4"),
		Entry("a network that takes in loopback", "FLANNEL_NETWORK", "96.0.0.0/3", "take in the loopback addresses 127.0.0.0/8"),
		Entry("a link-local network", "FLANNEL_NETWORK", "169.254.0.0/16", "take in the link-local addresses 169.254.0.0/16"),
		Entry("a multicast network", "FLANNEL_NETWORK", "239.0.0.0/8", "take in the multicast addresses 224.0.0.0/4"),
		Entry("a network of the unspecified range", "FLANNEL_NETWORK", "0.0.0.0/8", "take in the unspecified addresses 0.0.0.0/8"),
		Entry("a subnet of all IPv4", "FLANNEL_SUBNET", "198.18.3.1/0", "be all of IPv4"),
		Entry("a loopback subnet", "FLANNEL_SUBNET", "127.0.0.1/8", "take in the loopback addresses 127.0.0.0/8"),
		Entry("a link-local subnet", "FLANNEL_SUBNET", "169.254.3.1/24", "take in the link-local addresses 169.254.0.0/16"),
	)
})

// FuzzParse: whatever Parse takes holds only keys, '=', newlines and the characters of IPv4 CIDRs, numbers and
// true or false, and Format gives back what Parse read.
func FuzzParse(f *testing.F) {
	f.Add([]byte(flanneldWrote))
	f.Add([]byte(with("FLANNEL_MTU", "FLANNEL_MTU=$(id)\n")))
	f.Add([]byte("FLANNEL_IPMASQ=false\nFLANNEL_MTU=68\nFLANNEL_SUBNET=0.0.0.1/0\nFLANNEL_NETWORK=0.0.0.0/0\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		env, err := subnetenv.Parse(data)
		if err != nil {
			return
		}
		if strings.Trim(string(data), "ABCDEFGHIJKLMNOPQRSTUVWXYZ_=0123456789./truefals\n") != "" {
			t.Fatalf("Parse took %q", data)
		}
		again, err := subnetenv.Parse(env.Format())
		if err != nil || again != env {
			t.Fatalf("Format(%q) = %q, which parses as %v, %v", data, env.Format(), again, err)
		}
	})
}
