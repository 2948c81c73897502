// Command vmboot is how every process of a simulated VM starts: it makes the process's kernel look like the
// stemcell's, then execs the command, which keeps that view, as does everything it starts (bpm's containers
// and docker's included, whose own filters only add refusals):
//   - ipv6.disable=1, on every stemcell's kernel command line: socket(AF_INET6, ...) fails with EAFNOSUPPORT;
//   - the system calls the stemcell's kernel is too old for (stemcell.Kernel.Lacks) fail with ENOSYS.
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
	"unsafe"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"

	"github.com/flannel-dns/flannel-dns/src/e2e/stemcell"
)

// Offsets in struct seccomp_data; the first argument's low 32 bits, on a little-endian machine.
const (
	offsetNr   = 0
	offsetArch = 4
	offsetArg0 = 16
	auditArch  = 0xc000003e // AUDIT_ARCH_X86_64
)

func main() {
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
	path, err := exec.LookPath(flag.Arg(0))
	if err == nil {
		// The filter binds the thread that installs it; exec from that same thread carries it over.
		runtime.LockOSThread()
		err = install(program(kernel.Lacks()))
	}
	if err == nil {
		err = unix.Exec(path, flag.Args(), os.Environ())
	}
	fmt.Fprintln(os.Stderr, "vmboot:", err)
	os.Exit(1)
}

// program answers ENOSYS to each of lacking, EAFNOSUPPORT to socket(AF_INET6, ...), and allows the rest.
func program(lacking []stemcell.Syscall) []bpf.Instruction {
	n := uint8(len(lacking))
	allow := bpf.RetConstant{Val: unix.SECCOMP_RET_ALLOW}
	prog := []bpf.Instruction{
		bpf.LoadAbsolute{Off: offsetArch, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: auditArch, SkipFalse: 5 + n}, // to allow
		bpf.LoadAbsolute{Off: offsetNr, Size: 4},
	}
	for i, s := range lacking {
		prog = append(prog, bpf.JumpIf{Cond: bpf.JumpEqual, Val: s.Nr, SkipTrue: 4 + n - uint8(i)}) // to ENOSYS
	}
	return append(prog,
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.SYS_SOCKET, SkipFalse: 3}, // to allow
		bpf.LoadAbsolute{Off: offsetArg0, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.AF_INET6, SkipFalse: 1}, // to allow
		bpf.RetConstant{Val: unix.SECCOMP_RET_ERRNO | uint32(unix.EAFNOSUPPORT)},
		allow,
		bpf.RetConstant{Val: unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)},
	)
}

func install(instructions []bpf.Instruction) error {
	raw, err := bpf.Assemble(instructions)
	if err != nil {
		return fmt.Errorf("assembling the filter: %w", err)
	}
	filter := make([]unix.SockFilter, len(raw))
	for i, in := range raw {
		filter[i] = unix.SockFilter{Code: in.Op, Jt: in.Jt, Jf: in.Jf, K: in.K}
	}
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	if err := unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&prog)), 0, 0); err != nil {
		return fmt.Errorf("installing the seccomp filter: %w", err)
	}
	return nil
}
