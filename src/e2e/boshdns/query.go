package boshdns

import (
	"net"
	"sort"
	"time"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
	"github.com/miekg/dns"

	"github.com/flannel-dns/flannel-dns/src/e2e/network"
)

// Answer is what a DNS server said about a name: its response code and the A records, sorted.
type Answer struct {
	Rcode     string // NOERROR, NXDOMAIN, ...
	Addresses []string
}

// Query asks server (address:port) in network namespace ns for the A records of name.
func Query(ns, server, name string) (Answer, error) {
	var answer Answer
	err := network.InNamespace(ns, func() error {
		msg := new(dns.Msg)
		msg.SetQuestion(dns.Fqdn(name), dns.TypeA)
		client := &dns.Client{Timeout: 2 * time.Second}
		in, _, err := client.Exchange(msg, server)
		if err != nil {
			return bosherr.WrapErrorf(err, "Asking %s in %s for %s", server, ns, name)
		}
		answer.Rcode = dns.RcodeToString[in.Rcode]
		for _, rr := range in.Answer {
			if a, ok := rr.(*dns.A); ok {
				answer.Addresses = append(answer.Addresses, a.A.String())
			}
		}
		sort.Strings(answer.Addresses)
		return nil
	})
	return answer, err
}

// Resolver is bosh-dns's address and port on every VM.
var Resolver = net.JoinHostPort("169.254.0.2", "53")
