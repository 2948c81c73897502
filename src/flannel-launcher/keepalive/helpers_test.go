package keepalive_test

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	"github.com/onsi/gomega/gexec"
	"golang.org/x/sys/unix"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/keepalive"
	"github.com/flannel-dns/flannel-dns/src/testenv/tcpserver"
)

// startHolder runs tcpholder (through prefix, e.g. `ip netns exec NS`) and waits for its line saying it is
// set up. The process is killed when the spec ends.
func startHolder(prefix []string, mode string, addresses ...string) *gexec.Session {
	args := append(append(prefix, tcpholder, mode), addresses...)
	session, err := gexec.Start(exec.Command(args[0], args[1:]...), GinkgoWriter, GinkgoWriter)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { session.Kill().Wait() })
	ready := map[string]string{"dial": "ready", "talk": "ready", "exchange": "ready", "listen": "listening", "echo": "listening"}[mode]
	Eventually(session).Should(gbytes.Say(ready))
	return session
}

// openProcess takes a handle on pid, released when the spec ends.
func openProcess(pid int) *keepalive.Process {
	process, err := keepalive.OpenProcess(pid)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(process.Close)
	return process
}

// options is what the kernel reports for one socket.
type options struct {
	keepalive, idle, interval, count, userTimeout int
}

// peerOptions reads the options of each of pid's TCP sockets, keyed by peer port. It finds them on its own
// (every socket descriptor, copied, asked for its peer), not the way the package does.
func peerOptions(pid int) map[int][]options {
	pidfd, err := unix.PidfdOpen(pid, 0)
	Expect(err).NotTo(HaveOccurred())
	defer unix.Close(pidfd)
	fdDir := filepath.Join("/proc", strconv.Itoa(pid), "fd")
	entries, err := os.ReadDir(fdDir)
	Expect(err).NotTo(HaveOccurred())
	found := map[int][]options{}
	for _, entry := range entries {
		target, _ := os.Readlink(filepath.Join(fdDir, entry.Name()))
		if !strings.HasPrefix(target, "socket:") {
			continue
		}
		fd, _ := strconv.Atoi(entry.Name())
		copied, err := unix.PidfdGetfd(pidfd, fd, 0)
		Expect(err).NotTo(HaveOccurred())
		if port, ok := peerPort(copied); ok {
			found[port] = append(found[port], readOptions(copied))
		}
		unix.Close(copied)
	}
	return found
}

func peerPort(fd int) (int, bool) {
	peer, err := unix.Getpeername(fd)
	if err != nil {
		return 0, false // a listener or a socket that is not connected
	}
	switch addr := peer.(type) {
	case *unix.SockaddrInet4:
		return addr.Port, true
	case *unix.SockaddrInet6:
		return addr.Port, true
	}
	return 0, false
}

func readOptions(fd int) options {
	get := func(level, name int) int {
		value, err := unix.GetsockoptInt(fd, level, name)
		Expect(err).NotTo(HaveOccurred())
		return value
	}
	return options{
		keepalive:   get(unix.SOL_SOCKET, unix.SO_KEEPALIVE),
		idle:        get(unix.IPPROTO_TCP, unix.TCP_KEEPIDLE),
		interval:    get(unix.IPPROTO_TCP, unix.TCP_KEEPINTVL),
		count:       get(unix.IPPROTO_TCP, unix.TCP_KEEPCNT),
		userTimeout: get(unix.IPPROTO_TCP, unix.TCP_USER_TIMEOUT),
	}
}

// holdingListener accepts connections on address and keeps them until the spec ends.
func holdingListener(address string) *net.TCPAddr {
	server, err := tcpserver.Start(address, nil)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(server.Close)
	return server.Addr()
}
