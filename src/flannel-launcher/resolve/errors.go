package resolve

import (
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/miekg/dns"
)

// Cause is why one lookup failed.
type Cause int

const (
	NXDomain      Cause = iota // the server says the name does not exist
	NoAddresses                // the name exists but has no A or AAAA record
	ServerFailure              // any other error rcode, SERVFAIL most often
	Timeout                    // no answer in time
	Unreachable                // the query could not be sent or the reply not read
)

// LookupError is one failed lookup of Name at Server. Callers may retry it.
type LookupError struct {
	Name   string
	Server string
	Cause  Cause
	Rcode  int   // with ServerFailure
	Err    error // with Timeout and Unreachable
}

func (e *LookupError) Error() string {
	return fmt.Sprintf("looking up '%s' at %s: %s", e.Name, e.Server, e.describe())
}

func (e *LookupError) describe() string {
	switch e.Cause {
	case NXDomain:
		return "NXDOMAIN: the name does not exist"
	case NoAddresses:
		return "empty answer: the name has no A or AAAA record"
	case ServerFailure:
		return fmt.Sprintf("the server answered %s", dns.RcodeToString[e.Rcode])
	case Timeout:
		return "no answer before the timeout"
	default:
		return fmt.Sprintf("server unreachable: %s", e.Err)
	}
}

// GaveUpError ends WaitForAnswer: the deadline passed without an answer.
type GaveUpError struct {
	Name     string
	Servers  []string
	Attempts int
	Waited   time.Duration
	Last     error
}

func (e *GaveUpError) Error() string {
	return fmt.Sprintf("no address for '%s' from %s after %d attempts over %s; last error: %s",
		e.Name, strings.Join(e.Servers, ", "), e.Attempts, e.Waited.Round(time.Millisecond), e.Last)
}

func joinIPs(ips []net.IP) string {
	parts := make([]string, len(ips))
	for i, ip := range ips {
		parts[i] = ip.String()
	}
	return strings.Join(parts, ", ")
}
