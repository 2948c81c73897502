// probe is the process of the pinned-bpm suite's jobs: it reports what its container gives it, one "key value"
// line each, writes a file into each directory it is given, prints "ready" and waits for SIGTERM. With -once
// it reports and exits.
package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/vishvananda/netlink"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/sockdiag"
)

// pidfd_getfd(2) on x86-64; with pidfd -1 the kernel answers EBADF unless a seccomp filter answers first.
const sysPidfdGetfd = 438

func main() {
	fmt.Printf("uid %d\ngid %d\n", os.Getuid(), os.Getgid())
	status, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(status), "\n") {
		if key, value, ok := strings.Cut(line, ":"); ok && (key == "CapEff" || key == "NoNewPrivs" || key == "Seccomp") {
			fmt.Printf("%s %s\n", key, strings.TrimSpace(value))
		}
	}
	var nofile syscall.Rlimit
	_ = syscall.Getrlimit(syscall.RLIMIT_NOFILE, &nofile)
	fmt.Printf("nofile %d\n", nofile.Max)
	_, _, errno := syscall.Syscall(sysPidfdGetfd, ^uintptr(0), 0, 0)
	fmt.Printf("pidfd_getfd %d\n", int(errno))
	fd, err := syscall.Socket(syscall.AF_INET6, syscall.SOCK_DGRAM, 0)
	if err == nil {
		syscall.Close(fd)
	}
	fmt.Printf("socket_inet6 %d\n", errnoOf(err))
	// 0 where the kernel destroys sockets, 95 (EOPNOTSUPP) on one without SOCK_DESTROY; RTM_DELADDR shares
	// SOCK_DESTROY's message type on another netlink family, and is answered 99 (EADDRNOTAVAIL) for an address
	// lo does not have.
	fmt.Printf("sock_destroy %d\n", errnoOf(sockdiag.CanDestroy()))
	fmt.Printf("rtm_deladdr %d\n", errnoOf(deleteAbsentAddress()))
	keepalive, _ := os.ReadFile("/proc/sys/net/ipv4/tcp_keepalive_time")
	fmt.Printf("tcp_keepalive_time %s\n", strings.TrimSpace(string(keepalive)))
	if len(os.Args) > 1 && os.Args[1] == "-once" {
		return
	}
	for _, dir := range os.Args[1:] {
		result := "ok"
		if err := os.WriteFile(filepath.Join(dir, "probe"), []byte("probe\n"), 0o600); err != nil {
			result = err.Error()
		}
		fmt.Printf("write:%s %s\n", dir, result)
	}
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	fmt.Println("ready")
	<-term
	fmt.Println("stopping")
}

func errnoOf(err error) int {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return int(errno)
	}
	return 0
}

func deleteAbsentAddress() error {
	lo, err := netlink.LinkByName("lo")
	if err != nil {
		return err
	}
	return netlink.AddrDel(lo, &netlink.Addr{IPNet: &net.IPNet{IP: net.IPv4(127, 0, 2, 1), Mask: net.CIDRMask(32, 32)}})
}
