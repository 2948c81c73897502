// Package tcpserver is a TCP server for tests that keeps every connection it accepts until it is closed,
// either silent (a black hole) or serving each one with a function of the test's.
//
//	server, err := tcpserver.Start("127.0.0.1:0", tcpserver.Echo)
//	defer server.Close()
package tcpserver

import (
	"io"
	"net"
	"sync"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
)

// Server accepts connections until Close.
type Server struct {
	listener  net.Listener
	serve     func(net.Conn)
	conns     []net.Conn // only the accepting goroutine adds to it
	accepting sync.WaitGroup
	serving   sync.WaitGroup
}

// Echo sends back what it reads.
func Echo(conn net.Conn) { _, _ = io.Copy(conn, conn) }

// Start listens on address. serve runs on each accepted connection in a goroutine of its own; nil holds the
// connection without reading or writing.
func Start(address string, serve func(net.Conn)) (*Server, error) {
	listener, err := net.Listen("tcp", address)
	if err != nil {
		return nil, bosherr.WrapErrorf(err, "Listening on %s", address)
	}
	s := &Server{listener: listener, serve: serve}
	s.accepting.Go(s.accept)
	return s, nil
}

// Addr is where the server listens.
func (s *Server) Addr() *net.TCPAddr {
	return s.listener.Addr().(*net.TCPAddr)
}

func (s *Server) accept() {
	for {
		conn, err := s.listener.Accept()
		if err != nil {
			return // closed
		}
		s.conns = append(s.conns, conn)
		if s.serve != nil {
			s.serving.Go(func() { s.serve(conn) })
		}
	}
}

// Close stops listening, closes every connection and waits for the server's goroutines.
func (s *Server) Close() {
	s.listener.Close()
	s.accepting.Wait()
	for _, conn := range s.conns {
		conn.Close()
	}
	s.serving.Wait()
}
