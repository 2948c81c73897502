// tcpholder holds TCP connections open for the keepalive tests.
//
//	tcpholder dial ADDR...    connects to each address without keepalive (like flanneld's etcd client),
//	                          prints "connected LOCAL REMOTE" for each, then "ready", then
//	                          "closed REMOTE: ERROR" when a connection fails.
//	tcpholder listen ADDR...  accepts connections on each address and holds them; prints "listening" once bound.
package main

import (
	"fmt"
	"io"
	"net"
	"os"
	"sync"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: tcpholder dial|listen ADDR...")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "dial":
		err = dial(os.Args[2:])
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

func dial(addresses []string) error {
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
		holding.Go(func() {
			_, err := io.Copy(io.Discard, conn)
			fmt.Printf("closed %s: %v\n", conn.RemoteAddr(), err)
		})
	}
	holding.Wait()
	return nil
}

func listen(addresses []string) error {
	var listeners []net.Listener
	for _, address := range addresses {
		listener, err := net.Listen("tcp", address)
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
