// bpmseccomp runs a command under a seccomp filter that, like bpm's profile for jobs that are not privileged,
// answers pidfd_open and pidfd_getfd with EPERM, and allows every other call:
//
//	bpmseccomp COMMAND [ARG...]
//
// The filter is installed on the thread that then execs the command, which keeps it, as do its children.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: bpmseccomp COMMAND [ARG...]")
		os.Exit(2)
	}
	path, err := exec.LookPath(os.Args[1])
	if err == nil {
		runtime.LockOSThread()
		err = installFilter()
	}
	if err == nil {
		err = unix.Exec(path, os.Args[1:], os.Environ())
	}
	fmt.Fprintln(os.Stderr, "bpmseccomp:", err)
	os.Exit(1)
}

func installFilter() error {
	const (
		loadNr = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS // seccomp_data.nr is at offset 0
		jumpEq = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		ret    = unix.BPF_RET | unix.BPF_K
	)
	filter := []unix.SockFilter{
		{Code: loadNr, K: 0},
		{Code: jumpEq, K: unix.SYS_PIDFD_OPEN, Jt: 2},
		{Code: jumpEq, K: unix.SYS_PIDFD_GETFD, Jt: 1},
		{Code: ret, K: unix.SECCOMP_RET_ALLOW},
		{Code: ret, K: unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)},
	}
	program := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return err
	}
	return unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&program)), 0, 0)
}
