package vtep_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/vishvananda/netns"
)

func TestVtep(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root: it creates network namespaces")
	}
	RegisterFailHandler(Fail)
	// generous: two shared cores run several suites at once
	SetDefaultEventuallyTimeout(5 * time.Second)
	RunSpecs(t, "Vtep Suite")
}

// nodeNamespace creates a network namespace standing for a VM, removed when the spec ends: eth0 (one end of a veth
// pair whose other end stays inside too) with 192.0.2.10/24 and MTU 1500, a default route via 192.0.2.1.
func nodeNamespace() string {
	ns := fmt.Sprintf("vtep-%d-%04x", GinkgoParallelProcess(), rand.IntN(0x10000))
	run("ip", "netns", "add", ns)
	DeferCleanup(run, "ip", "netns", "delete", ns)
	run("ip", "-n", ns, "link", "add", "eth0", "type", "veth", "peer", "name", "peer0")
	run("ip", "-n", ns, "address", "add", "192.0.2.10/24", "dev", "eth0")
	run("ip", "-n", ns, "link", "set", "eth0", "up")
	run("ip", "-n", ns, "link", "set", "peer0", "up")
	run("ip", "-n", ns, "route", "add", "default", "via", "192.0.2.1", "dev", "eth0")
	return ns
}

// inNamespace runs f on a thread that has entered namespace ns, as the launcher runs in its VM's.
func inNamespace(ns string, f func()) {
	done := make(chan struct{})
	go func() {
		defer GinkgoRecover()
		defer close(done)
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine, not back in the host's namespace
		handle, err := netns.GetFromName(ns)
		Expect(err).NotTo(HaveOccurred())
		defer handle.Close()
		Expect(netns.Set(handle)).To(Succeed())
		f()
	}()
	<-done
}

func run(args ...string) {
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "%s: %s", strings.Join(args, " "), out)
}
