package main

import (
	"fmt"
	"unsafe"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"

	"github.com/flannel-dns/flannel-dns/src/e2e/stemcell"
)

// Offsets in struct seccomp_data; an argument's low 32 bits, on a little-endian machine.
const (
	offsetNr   = 0
	offsetArch = 4
	offsetArg0 = 16
	offsetArg5 = offsetArg0 + 5*8
	auditArch  = 0xc000003e // AUDIT_ARCH_X86_64
	// sizeofSockaddrNetlink is sendto's address length for a netlink socket, as vishvananda/netlink sends.
	sizeofSockaddrNetlink = 12
)

// The filter's verdicts close the program, so that every jump goes forward to them.
var verdicts = []struct {
	label string
	ret   uint32
}{
	{"allow", unix.SECCOMP_RET_ALLOW},
	{"enosys", unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)},
	{"eafnosupport", unix.SECCOMP_RET_ERRNO | uint32(unix.EAFNOSUPPORT)},
	{"notify", unix.SECCOMP_RET_USER_NOTIF},
}

// jump compares the loaded word with val and goes to label yes or no; "" is the next instruction.
type jump struct {
	val     uint32
	yes, no string
}

// label names the next instruction.
type label string

// program answers ENOSYS to each of lacking and EAFNOSUPPORT to socket(AF_INET6, ...). Without destroysSockets,
// a sendto on a netlink address goes to the supervisor, which refuses sock_diag's SOCK_DESTROY (supervise.go).
func program(lacking []stemcell.Syscall, destroysSockets bool) []bpf.Instruction {
	body := []any{
		bpf.LoadAbsolute{Off: offsetArch, Size: 4}, jump{val: auditArch, no: "allow"},
		bpf.LoadAbsolute{Off: offsetNr, Size: 4},
	}
	for _, s := range lacking {
		body = append(body, jump{val: s.Nr, yes: "enosys"})
	}
	body = append(body, jump{val: unix.SYS_SOCKET, no: "sendto"},
		bpf.LoadAbsolute{Off: offsetArg0, Size: 4}, jump{val: unix.AF_INET6, yes: "eafnosupport", no: "allow"},
		label("sendto"))
	if !destroysSockets {
		body = append(body, jump{val: unix.SYS_SENDTO, no: "allow"},
			bpf.LoadAbsolute{Off: offsetArg5, Size: 4}, jump{val: sizeofSockaddrNetlink, yes: "notify"})
	}
	return assemble(body)
}

// assemble resolves the jumps' labels and appends the verdicts.
func assemble(body []any) []bpf.Instruction {
	at := map[string]int{}
	n := 0
	for _, part := range body {
		if l, ok := part.(label); ok {
			at[string(l)] = n
		} else {
			n++
		}
	}
	for i, v := range verdicts {
		at[v.label] = n + i
	}
	var prog []bpf.Instruction
	for _, part := range body {
		switch p := part.(type) {
		case label:
		case jump:
			skip := func(to string) uint8 {
				if to == "" {
					return 0
				}
				return uint8(at[to] - len(prog) - 1)
			}
			prog = append(prog, bpf.JumpIf{Cond: bpf.JumpEqual, Val: p.val, SkipTrue: skip(p.yes), SkipFalse: skip(p.no)})
		case bpf.Instruction:
			prog = append(prog, p)
		}
	}
	for _, v := range verdicts {
		prog = append(prog, bpf.RetConstant{Val: v.ret})
	}
	return prog
}

// install installs the filter on the calling thread; with listen, it returns the filter's notification fd.
func install(instructions []bpf.Instruction, listen bool) (int, error) {
	raw, err := bpf.Assemble(instructions)
	if err != nil {
		return -1, fmt.Errorf("assembling the filter: %w", err)
	}
	filter := make([]unix.SockFilter, len(raw))
	for i, in := range raw {
		filter[i] = unix.SockFilter{Code: in.Op, Jt: in.Jt, Jf: in.Jf, K: in.K}
	}
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	var flags uintptr
	if listen {
		flags = unix.SECCOMP_FILTER_FLAG_NEW_LISTENER
	}
	fd, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, flags, uintptr(unsafe.Pointer(&prog)))
	if errno != 0 {
		return -1, fmt.Errorf("installing the seccomp filter: %w", errno)
	}
	return int(fd), nil
}
