// noipv6 runs a command as on a kernel booted with ipv6.disable=1 (every BOSH stemcell): it installs a seccomp
// filter that answers EAFNOSUPPORT to socket(AF_INET6, ...), then execs the command, which inherits the filter.
//
//	noipv6 COMMAND [ARG ...]
package main

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"unsafe"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// Offsets in struct seccomp_data.
const (
	offsetNr   = 0
	offsetArch = 4
	offsetArg0 = 16         // the low 32 bits of the first argument on a little-endian machine
	auditArch  = 0xc000003e // AUDIT_ARCH_X86_64
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: noipv6 COMMAND [ARG ...]")
		os.Exit(2)
	}
	path, err := exec.LookPath(os.Args[1])
	if err == nil {
		err = installFilter()
	}
	if err == nil {
		err = syscall.Exec(path, os.Args[1:], os.Environ())
	}
	fmt.Fprintln(os.Stderr, "noipv6:", err)
	os.Exit(1)
}

func installFilter() error {
	program, err := bpf.Assemble([]bpf.Instruction{
		bpf.LoadAbsolute{Off: offsetArch, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: auditArch, SkipFalse: 5},
		bpf.LoadAbsolute{Off: offsetNr, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.SYS_SOCKET, SkipFalse: 3},
		bpf.LoadAbsolute{Off: offsetArg0, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.AF_INET6, SkipFalse: 1},
		bpf.RetConstant{Val: unix.SECCOMP_RET_ERRNO | uint32(unix.EAFNOSUPPORT)},
		bpf.RetConstant{Val: unix.SECCOMP_RET_ALLOW},
	})
	if err != nil {
		return err
	}
	filters := make([]unix.SockFilter, len(program))
	for i, in := range program {
		filters[i] = unix.SockFilter{Code: in.Op, Jt: in.Jt, Jf: in.Jf, K: in.K}
	}
	prog := unix.SockFprog{Len: uint16(len(filters)), Filter: &filters[0]}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	// TSYNC: every thread of this process, so that the exec below, on whichever thread, carries the filter.
	if _, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC,
		uintptr(unsafe.Pointer(&prog))); errno != 0 {
		return fmt.Errorf("seccomp: %w", errno)
	}
	return nil
}
