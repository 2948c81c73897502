package stemcell

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// Kernel is a kernel version, major and minor.
type Kernel struct{ Major, Minor int }

func (k Kernel) String() string { return fmt.Sprintf("%d.%d", k.Major, k.Minor) }

func (k Kernel) atLeast(o Kernel) bool {
	return k.Major > o.Major || (k.Major == o.Major && k.Minor >= o.Minor)
}

// Syscall is a system call that a kernel has only from a version on.
type Syscall struct {
	Name  string
	Nr    uint32 // on x86-64
	Since Kernel
}

// newerSyscalls are the calls the launcher tries that the stemcells' kernels may lack: the keepalive tuner's.
var newerSyscalls = []Syscall{
	{"pidfd_open", unix.SYS_PIDFD_OPEN, Kernel{5, 3}},
	{"pidfd_getfd", unix.SYS_PIDFD_GETFD, Kernel{5, 6}},
}

// Lacks lists the calls of newerSyscalls that kernel k does not have: a process calling them gets ENOSYS.
func (k Kernel) Lacks() []Syscall {
	var lacking []Syscall
	for _, s := range newerSyscalls {
		if !k.atLeast(s.Since) {
			lacking = append(lacking, s)
		}
	}
	return lacking
}

// DestroysSockets tells whether the kernel has sock_diag's SOCK_DESTROY (from 4.5 on; trusty's 4.4 has none),
// as a kernel built with CONFIG_INET_DIAG_DESTROY does.
func (k Kernel) DestroysSockets() bool { return k.atLeast(Kernel{4, 5}) }
