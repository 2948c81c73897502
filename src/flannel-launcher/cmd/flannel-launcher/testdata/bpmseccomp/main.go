// bpmseccomp runs a command under a seccomp filter that, like bpm's profile for jobs that are not privileged,
// answers pidfd_open and pidfd_getfd with EPERM, and allows every other call:
//
//	bpmseccomp [-errno EPERM|EACCES|ENOSYS] [-getfd-only] COMMAND [ARG...]
//
// -errno picks the answer (ENOSYS: as a kernel without the call); -getfd-only refuses pidfd_getfd alone, as a
// kernel from 5.3 to 5.5 does (it has pidfd_open). The filter is installed on the thread that then execs the
// command, which keeps it, as do its children.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

var errnos = map[string]unix.Errno{"EPERM": unix.EPERM, "EACCES": unix.EACCES, "ENOSYS": unix.ENOSYS}

func main() {
	name := flag.String("errno", "EPERM", "the refusal: EPERM, EACCES or ENOSYS")
	getfdOnly := flag.Bool("getfd-only", false, "refuse pidfd_getfd only")
	flag.Parse()
	errno, known := errnos[*name]
	if flag.NArg() < 1 || !known {
		fmt.Fprintln(os.Stderr, "usage: bpmseccomp [-errno EPERM|EACCES|ENOSYS] [-getfd-only] COMMAND [ARG...]")
		os.Exit(2)
	}
	path, err := exec.LookPath(flag.Arg(0))
	if err == nil {
		runtime.LockOSThread()
		err = installFilter(errno, *getfdOnly)
	}
	if err == nil {
		err = unix.Exec(path, flag.Args(), os.Environ())
	}
	fmt.Fprintln(os.Stderr, "bpmseccomp:", err)
	os.Exit(1)
}

func installFilter(errno unix.Errno, getfdOnly bool) error {
	const (
		loadNr = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS // seccomp_data.nr is at offset 0
		jumpEq = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		ret    = unix.BPF_RET | unix.BPF_K
	)
	open := uint32(unix.SYS_PIDFD_OPEN)
	if getfdOnly {
		open = unix.SYS_PIDFD_GETFD // checked twice: pidfd_open falls through to allow
	}
	filter := []unix.SockFilter{
		{Code: loadNr, K: 0},
		{Code: jumpEq, K: open, Jt: 2},
		{Code: jumpEq, K: unix.SYS_PIDFD_GETFD, Jt: 1},
		{Code: ret, K: unix.SECCOMP_RET_ALLOW},
		{Code: ret, K: unix.SECCOMP_RET_ERRNO | uint32(errno)},
	}
	program := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return err
	}
	return unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&program)), 0, 0)
}
