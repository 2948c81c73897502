// Command vmboot is how every process of a simulated VM starts: it makes the process's kernel look like the
// stemcell's, then execs the command, which keeps that view, as does everything it starts (bpm's containers
// and docker's included, whose own filters only add refusals):
//   - ipv6.disable=1, on every stemcell's kernel command line: socket(AF_INET6, ...) fails with EAFNOSUPPORT;
//   - the system calls the stemcell's kernel is too old for (stemcell.Kernel.Lacks) fail with ENOSYS;
//   - on a kernel without SOCK_DESTROY (stemcell.Kernel.DestroysSockets), sock_diag refuses it with EOPNOTSUPP
//     (supervise.go).
//
// It does so with a seccomp filter, installed without no_new_privs (the harness runs as root, which holds
// CAP_SYS_ADMIN), so that setuid programs and file capabilities on the VM work as on a stemcell.
//
//	vmboot -kernel 4.15 COMMAND [ARG ...]
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"runtime"

	"golang.org/x/sys/unix"

	"github.com/flannel-dns/flannel-dns/src/e2e/stemcell"
)

func main() {
	if len(os.Args) == 2 && os.Args[1] == "-supervise" {
		if err := supervise(); err != nil {
			fmt.Fprintln(os.Stderr, "vmboot -supervise:", err)
			os.Exit(1)
		}
		return
	}
	var kernel stemcell.Kernel
	flag.Func("kernel", "the stemcell's kernel, major.minor", func(s string) error {
		_, err := fmt.Sscanf(s, "%d.%d", &kernel.Major, &kernel.Minor)
		return err
	})
	flag.Parse()
	if flag.NArg() < 1 || kernel.Major == 0 {
		fmt.Fprintln(os.Stderr, "usage: vmboot -kernel MAJOR.MINOR COMMAND [ARG ...]")
		os.Exit(2)
	}
	fmt.Fprintln(os.Stderr, "vmboot:", boot(kernel, flag.Args()))
	os.Exit(1)
}

// boot returns only when the command could not be started.
func boot(kernel stemcell.Kernel, args []string) error {
	path, err := exec.LookPath(args[0])
	if err != nil {
		return err
	}
	var supervisor *os.File
	if !kernel.DestroysSockets() {
		if supervisor, err = startSupervisor(); err != nil {
			return err
		}
	}
	// The filter binds the thread that installs it; exec from that same thread carries it over.
	runtime.LockOSThread()
	listener, err := install(program(kernel.Lacks(), kernel.DestroysSockets()), supervisor != nil)
	if err != nil {
		return err
	}
	if supervisor != nil {
		if err := handOver(supervisor, listener); err != nil {
			return err
		}
	}
	return unix.Exec(path, args, os.Environ())
}
