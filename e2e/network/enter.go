package network

import (
	"os"
	"path/filepath"
	"runtime"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
	"golang.org/x/sys/unix"
)

// InNamespace runs f on a thread moved into network namespace ns (a name under /run/netns, or the path of a
// namespace file such as /proc/<pid>/ns/net), for making sockets there: a socket stays in the namespace it was
// made in. The thread is never handed back to the runtime.
func InNamespace(ns string, f func() error) error {
	path := ns
	if !filepath.IsAbs(ns) {
		path = "/run/netns/" + ns
	}
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread exits with this goroutine
		nsFile, err := os.Open(path)
		if err != nil {
			done <- bosherr.WrapErrorf(err, "Opening namespace %s", ns)
			return
		}
		defer nsFile.Close()
		if err := unix.Setns(int(nsFile.Fd()), unix.CLONE_NEWNET); err != nil {
			done <- bosherr.WrapErrorf(err, "Entering namespace %s", ns)
			return
		}
		done <- f()
	}()
	return <-done
}
