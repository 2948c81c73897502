package etcdcluster

import (
	"net"
	"sync"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
)

// blackHole accepts connections and holds them open without reading or writing.
type blackHole struct {
	listener net.Listener
	mu       sync.Mutex
	conns    []net.Conn
	done     sync.WaitGroup
}

func listenBlackHole(address string) (*blackHole, error) {
	listener, err := net.Listen("tcp", address)
	if err != nil {
		return nil, bosherr.WrapErrorf(err, "Listening on %s", address)
	}
	hole := &blackHole{listener: listener}
	hole.done.Go(hole.accept)
	return hole, nil
}

func (h *blackHole) accept() {
	for {
		conn, err := h.listener.Accept()
		if err != nil {
			return // closed
		}
		h.mu.Lock()
		h.conns = append(h.conns, conn)
		h.mu.Unlock()
	}
}

func (h *blackHole) close() {
	h.listener.Close()
	h.done.Wait()
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, conn := range h.conns {
		conn.Close()
	}
}
