package network

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
	"golang.org/x/sys/unix"
)

// InNamespace runs f on a thread moved into network namespace ns (a name under /run/netns, or the path of a
// namespace file such as /proc/<pid>/ns/net), for making sockets there: a socket stays in the namespace it was
// made in. The thread goes back to its own namespace afterwards. That matters when it is the process's main
// thread: the main thread's namespace is the process's in /proc/<pid>/ns/net, so left in a VM's namespace, the
// harness would be counted among the VM's processes and killed with them. A thread that cannot go back is
// never handed back to the runtime (it exits with the goroutine; the main thread would stay parked).
func InNamespace(ns string, f func() error) error {
	path := ns
	if !filepath.IsAbs(ns) {
		path = "/run/netns/" + ns
	}
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		own, err := os.Open("/proc/self/task/" + strconv.Itoa(unix.Gettid()) + "/ns/net")
		if err != nil {
			done <- bosherr.WrapError(err, "Opening the thread's own network namespace")
			return
		}
		defer own.Close()
		target, err := os.Open(path)
		if err != nil {
			done <- bosherr.WrapErrorf(err, "Opening namespace %s", ns)
			return
		}
		defer target.Close()
		if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
			done <- bosherr.WrapErrorf(err, "Entering namespace %s", ns)
			return
		}
		result := f()
		if unix.Setns(int(own.Fd()), unix.CLONE_NEWNET) == nil {
			runtime.UnlockOSThread()
		}
		done <- result
	}()
	return <-done
}
