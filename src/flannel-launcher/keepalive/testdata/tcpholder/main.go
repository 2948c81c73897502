// tcpholder holds TCP connections open for the keepalive tests.
//
//	tcpholder dial ADDR...    connects to each address without keepalive (like flanneld's etcd client),
//	                          prints "connected LOCAL REMOTE" for each, then "ready", then
//	                          "closed REMOTE: ERROR" when a connection fails.
//	tcpholder talk ADDR...    as dial, and writes a byte to each connection every 500 ms.
//	tcpholder exchange ADDR...  as dial, then on each connection writes a byte every 50 ms and reads it back (from
//	                          an echo server), like a client with requests in flight; after a failure it dials
//	                          the address again every 100 ms ("connected LOCAL REMOTE" again) and goes on.
//	tcpholder listen ADDR...  accepts connections on each address and holds them, without keepalive; prints
//	                          "listening" once bound.
//	tcpholder echo ADDR...    as listen, and sends back what each connection sends.
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
		fmt.Fprintln(os.Stderr, "usage: tcpholder dial|talk|exchange|listen|echo ADDR...")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "dial", "talk":
		err = dial(os.Args[2:], os.Args[1] == "talk")
	case "exchange":
		err = exchange(os.Args[2:])
	case "listen", "echo":
		err = listen(os.Args[2:], os.Args[1] == "echo")
	default:
		err = fmt.Errorf("unknown mode '%s'", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// dialer connects without keepalive, like flanneld's etcd client.
var dialer = net.Dialer{KeepAlive: -1}

func connect(address string) (net.Conn, error) {
	conn, err := dialer.Dial("tcp", address)
	if err == nil {
		fmt.Printf("connected %s %s\n", conn.LocalAddr(), conn.RemoteAddr())
	}
	return conn, err
}

// connectAll connects to each address, then prints "ready".
func connectAll(addresses []string) ([]net.Conn, error) {
	var conns []net.Conn
	for _, address := range addresses {
		conn, err := connect(address)
		if err != nil {
			return nil, err
		}
		conns = append(conns, conn)
	}
	fmt.Println("ready")
	return conns, nil
}

func dial(addresses []string, talk bool) error {
	conns, err := connectAll(addresses)
	if err != nil {
		return err
	}
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

func exchange(addresses []string) error {
	conns, err := connectAll(addresses)
	if err != nil {
		return err
	}
	var exchanging sync.WaitGroup
	for i, conn := range conns {
		exchanging.Go(func() {
			for {
				err := pingPong(conn)
				fmt.Printf("closed %s: %v\n", conn.RemoteAddr(), err)
				conn.Close()
				for conn, err = connect(addresses[i]); err != nil; conn, err = connect(addresses[i]) {
					time.Sleep(100 * time.Millisecond)
				}
			}
		})
	}
	exchanging.Wait()
	return nil
}

// pingPong writes a byte every 50 ms and reads it back until that fails.
func pingPong(conn net.Conn) error {
	b := []byte("x")
	for range time.Tick(50 * time.Millisecond) {
		if _, err := conn.Write(b); err != nil {
			return err
		}
		if _, err := io.ReadFull(conn, b); err != nil {
			return err
		}
	}
	return nil
}

func listen(addresses []string, echo bool) error {
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
				if echo {
					go io.Copy(conn, conn)
				} else {
					go io.Copy(io.Discard, conn)
				}
			}
		})
	}
	accepting.Wait()
	return nil
}
