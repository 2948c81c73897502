package check_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/check"
)

// The report's contents come from real etcd and DNS in the command's tests; these pin down the layout.
var _ = Describe("Report", func() {
	var report check.Report

	BeforeEach(func() {
		report = check.Report{
			Alias: check.Alias{Name: "etcd.cfcr.internal", Addresses: []string{"192.0.2.1", "192.0.2.2"}},
			ServerCerts: []check.ServerCert{
				{Address: "192.0.2.1:2379", CoversAlias: true, NotAfter: time.Date(2027, 1, 2, 3, 4, 5, 0, time.UTC)},
				{Address: "192.0.2.2:2379", Error: "dial tcp 192.0.2.2:2379: connect: connection refused"},
			},
			Members: []check.Member{
				{Name: "master-0", ClientURL: "https://master-0.etcd.cfcr.internal:2379", Resolves: true, Healthy: true,
					Leader: true, Version: "3.6.16", RTTMillis: 1.25},
				{Name: "master-1", ClientURL: "https://master-1.etcd.cfcr.internal:2379", Error: "no such host"},
			},
			NetworkConfig: check.NetworkConfig{
				Key: "/coreos.com/network/config", State: "different",
				Existing:    `{"Network":"198.18.0.0/16","SubnetLen":24,"Backend":{"Type":"udp"}}`,
				Desired:     `{"Network":"198.18.0.0/16","SubnetLen":24,"Backend":{"Type":"vxlan"}}`,
				Differences: []string{`Backend.Type: stored "udp", desired "vxlan"`},
			},
			Problems: []string{"the network config differs"},
		}
	})

	It("writes aligned sections and the verdict with its reasons", func() {
		var out bytes.Buffer
		Expect(report.WriteTable(&out)).To(Succeed())
		Expect(out.String()).To(Equal(`ALIAS etcd.cfcr.internal: 192.0.2.1, 192.0.2.2

SERVER CERTIFICATE AT  COVERS ALIAS  EXPIRES               ERROR
192.0.2.1:2379         yes           2027-01-02T03:04:05Z  -
192.0.2.2:2379         no            -                     dial tcp 192.0.2.2:2379: connect: connection refused

MEMBER    CLIENT URL                                RESOLVES  HEALTHY  LEADER  VERSION  RTT    ERROR
master-0  https://master-0.etcd.cfcr.internal:2379  yes       yes      yes     3.6.16   1.2ms  -
master-1  https://master-1.etcd.cfcr.internal:2379  no        no       no      -        -      no such host

NETWORK CONFIG /coreos.com/network/config: different
  stored:  {"Network":"198.18.0.0/16","SubnetLen":24,"Backend":{"Type":"udp"}}
  desired: {"Network":"198.18.0.0/16","SubnetLen":24,"Backend":{"Type":"vxlan"}}
  differs: Backend.Type: stored "udp", desired "vxlan"

READY: no
  - the network config differs
`))
	})

	It("says ready when it is", func() {
		report.Ready, report.Problems = true, []string{}
		var out bytes.Buffer
		Expect(report.WriteTable(&out)).To(Succeed())
		Expect(out.String()).To(HaveSuffix("\nREADY: yes, flanneld could start now\n"))
	})

	It("writes each warning after the verdict", func() {
		report.Ready, report.Problems, report.Warnings = true, []string{}, []string{"the network config differs", "another"}
		var out bytes.Buffer
		Expect(report.WriteTable(&out)).To(Succeed())
		Expect(out.String()).To(HaveSuffix("\nREADY: yes, flanneld could start now\nWARNING: the network config differs\nWARNING: another\n"))
	})

	It("writes JSON with snake_case keys", func() {
		var out bytes.Buffer
		Expect(report.WriteJSON(&out)).To(Succeed())
		var decoded map[string]any
		Expect(json.Unmarshal(out.Bytes(), &decoded)).To(Succeed())
		Expect(decoded).To(HaveKeyWithValue("ready", false))
		Expect(decoded["members"]).To(ContainElement(SatisfyAll(
			HaveKeyWithValue("name", "master-0"), HaveKeyWithValue("rtt_ms", 1.25), HaveKeyWithValue("leader", true))))
		Expect(decoded["server_certificates"]).To(ContainElement(
			HaveKeyWithValue("not_after", "2027-01-02T03:04:05Z")))
		Expect(decoded["network_config"]).To(HaveKeyWithValue("state", "different"))
	})

	// The command's specs write ESC, BEL, DEL, C1 controls, a newline and a tab through real etcd; these add
	// what etcd cannot carry in a member name or a stored config as easily.
	Describe("with what a terminal would act on", func() {
		BeforeEach(func() {
			report.Members[0].Name = "bad\xffutf8 \u202egnp.exe ünïcode \U000e0001tag"
			report.Members[1].Error = "a\tb\rc"
		})

		It("escapes bytes that are not UTF-8, format and other unprintable runes in the table, and keeps letters", func() {
			var out bytes.Buffer
			Expect(report.WriteTable(&out)).To(Succeed())
			lines := strings.Split(out.String(), "\n")
			Expect(lines).To(ContainElement(`bad\xffutf8 \u202egnp.exe ünïcode \U000e0001tag  https://master-0.etcd.cfcr.internal:2379  ` +
				`yes       yes      yes     3.6.16   1.2ms  -`))
			Expect(lines).To(ContainElement(HaveSuffix(`-        -      a\tb\rc`)))
		})

		It("escapes them in the JSON as \\u escapes, surrogate pairs too, and decodes to the same text", func() {
			var out bytes.Buffer
			Expect(report.WriteJSON(&out)).To(Succeed())
			Expect(out.String()).To(ContainSubstring(`"name": "bad\ufffdutf8 \u202egnp.exe ünïcode \udb40\udc01tag"`))
			var decoded check.Report
			Expect(json.Unmarshal(out.Bytes(), &decoded)).To(Succeed())
			Expect(decoded.Members[0].Name).To(Equal("bad\ufffdutf8 \u202egnp.exe ünïcode \U000e0001tag"))
			Expect(decoded.Members[1].Error).To(Equal("a\tb\rc"))
		})
	})
})
