// Package loopback picks addresses in 127.0.0.0/8 for test servers. Addresses are drawn at random away from
// 127.0.0.x, so parallel test processes rarely meet, and a port is only handed out after binding it worked.
package loopback

import (
	"math/rand/v2"
	"net"
	"strconv"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
)

// IPs returns n consecutive addresses 127.a.b.1 .. 127.a.b.n with random a and b.
func IPs(n int) []net.IP {
	a, b := 1+rand.IntN(254), rand.IntN(256)
	ips := make([]net.IP, n)
	for i := range ips {
		ips[i] = net.IPv4(127, byte(a), byte(b), byte(i+1))
	}
	return ips
}

// FreePort finds a TCP port that is free on every one of the addresses.
func FreePort(ips []net.IP) (int, error) {
	for range 50 {
		first, err := net.Listen("tcp", net.JoinHostPort(ips[0].String(), "0"))
		if err != nil {
			return 0, bosherr.WrapErrorf(err, "Listening on %s", ips[0])
		}
		port := first.Addr().(*net.TCPAddr).Port
		free := freeOnAll(ips[1:], port)
		first.Close()
		if free {
			return port, nil
		}
	}
	return 0, bosherr.Errorf("No TCP port free on all of %v", ips)
}

func freeOnAll(ips []net.IP, port int) bool {
	for _, ip := range ips {
		l, err := net.Listen("tcp", net.JoinHostPort(ip.String(), strconv.Itoa(port)))
		if err != nil {
			return false
		}
		l.Close()
	}
	return true
}
