// tcpholder holds TCP connections open for the keepalive tests.
//
//	tcpholder dial ADDR...    connects to each address without keepalive (like flanneld's etcd client),
//	                          prints "connected LOCAL REMOTE" for each, then "ready", then
//	                          "closed REMOTE: ERROR" when a connection fails.
//	tcpholder talk ADDR...    as dial, and writes a byte to each connection every 500 ms.
//	tcpholder listen ADDR...  accepts connections on each address and holds them, without keepalive; prints
//	                          "listening" once bound.
package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"time"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: tcpholder dial|listen ADDR...")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "dial", "talk":
		err = dial(os.Args[2:], os.Args[1] == "talk")
	case "listen":
		err = listen(os.Args[2:])
	default:
		err = fmt.Errorf("unknown mode '%s'", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func dial(addresses []string, talk bool) error {
	dialer := net.Dialer{KeepAlive: -1}
	var conns []net.Conn
	for _, address := range addresses {
		conn, err := dialer.Dial("tcp", address)
		if err != nil {
			return err
		}
		fmt.Printf("connected %s %s\n", conn.LocalAddr(), conn.RemoteAddr())
		conns = append(conns, conn)
	}
	fmt.Println("ready")
	var holding sync.WaitGroup
	for _, conn := range conns {
		if talk {
			go write(conn)
		}
		holding.Go(func() {
			_, err := io.Copy(io.Discard, conn)
			fmt.Printf("closed %s: %v\n", conn.RemoteAddr(), err)
		})
	}
	holding.Wait()
	return nil
}

func write(conn net.Conn) {
	for range time.Tick(500 * time.Millisecond) {
		if _, err := conn.Write([]byte("x")); err != nil {
			return
		}
	}
}

func listen(addresses []string) error {
	var listeners []net.Listener
	for _, address := range addresses {
		// no keepalive on the accepted side either, so that the only segments are those the client side makes
		listener, err := (&net.ListenConfig{KeepAlive: -1}).Listen(context.Background(), "tcp", address)
		if err != nil {
			return err
		}
		listeners = append(listeners, listener)
	}
	fmt.Println("listening")
	var accepting sync.WaitGroup
	for _, listener := range listeners {
		accepting.Go(func() {
			for {
				conn, err := listener.Accept()
				if err != nil {
					return
				}
				go io.Copy(io.Discard, conn)
			}
		})
	}
	accepting.Wait()
	return nil
}
