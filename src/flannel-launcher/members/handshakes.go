package members

import (
	"net"
	"sync"
)

// handshakes remembers how each alias address fared in CheckServerCerts, so that the client dials the
// addresses that answered and a member whose address did not answer is not waited for a second time.
type handshakes struct {
	mu       sync.Mutex
	answered []net.IP
	failed   map[string]error // by address
}

func (h *handshakes) record(ips []net.IP, results []ServerCert) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.answered, h.failed = nil, map[string]error{}
	for i, result := range results {
		if result.Err == nil {
			h.answered = append(h.answered, ips[i])
		} else {
			h.failed[ips[i].String()] = result.Err
		}
	}
}

func (h *handshakes) answeredIPs() []net.IP {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.answered
}

// failure is the handshake error of the addresses when every one of them failed the handshake.
func (h *handshakes) failure(ips []net.IP) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	var err error
	for _, ip := range ips {
		failed, ok := h.failed[ip.String()]
		if !ok {
			return nil
		}
		err = failed
	}
	return err
}
