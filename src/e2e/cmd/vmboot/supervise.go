package main

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A kernel without SOCK_DESTROY is made of one that has it: the filter sends every sendto on a netlink address
// to a supervisor, a process vmboot starts before the filter binds it, which answers EOPNOTSUPP to a
// SOCK_DESTROY request on a sock_diag socket and lets every other call go on. A kernel without it sends the same
// errno in the request's acknowledgement instead (docs/e2e.md).

// notification is struct seccomp_notif; response is struct seccomp_notif_resp (linux/seccomp.h).
type notification struct {
	ID    uint64
	PID   uint32
	Flags uint32
	Nr    int32
	Arch  uint32
	IP    uint64
	Args  [6]uint64
}

type response struct {
	ID    uint64
	Val   int64
	Error int32
	Flags uint32
}

// startSupervisor starts vmboot -supervise in a session of its own (a stop of the command's process group
// leaves it), and returns the end of the socket that is to carry the filter's listener to it.
func startSupervisor() (*os.File, error) {
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("making the supervisor's socket: %w", err)
	}
	ours, theirs := os.NewFile(uintptr(pair[0]), "listener-out"), os.NewFile(uintptr(pair[1]), "listener-in")
	defer theirs.Close()
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, "-supervise")
	cmd.ExtraFiles = []*os.File{theirs} // fd 3
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		ours.Close()
		return nil, fmt.Errorf("starting the supervisor: %w", err)
	}
	return ours, nil
}

// handOver sends the listener to the supervisor.
func handOver(to *os.File, listener int) error {
	defer to.Close()
	defer unix.Close(listener)
	if err := unix.Sendmsg(int(to.Fd()), []byte{0}, unix.UnixRights(listener), nil, 0); err != nil {
		return fmt.Errorf("handing the listener to the supervisor: %w", err)
	}
	return nil
}

// supervise answers the filter's notifications until no process is bound by it.
func supervise() error {
	listener, err := receiveListener(3)
	if err != nil {
		return err
	}
	for {
		fds := []unix.PollFd{{Fd: int32(listener), Events: unix.POLLIN}}
		if _, err := unix.Poll(fds, -1); err != nil && !errors.Is(err, unix.EINTR) {
			return fmt.Errorf("polling the listener: %w", err)
		}
		if fds[0].Revents&unix.POLLHUP != 0 {
			return nil
		}
		if fds[0].Revents&unix.POLLIN != 0 {
			answerOne(listener)
		}
	}
}

func receiveListener(conn int) (int, error) {
	buf, oob := make([]byte, 1), make([]byte, unix.CmsgSpace(4))
	_, oobn, _, _, err := unix.Recvmsg(conn, buf, oob, 0)
	if err != nil {
		return -1, fmt.Errorf("receiving the listener: %w", err)
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return -1, fmt.Errorf("receiving the listener: no fd came (%v)", err)
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 1 {
		return -1, fmt.Errorf("receiving the listener: %v", err)
	}
	return fds[0], nil
}

// answerOne takes one notification and answers it; one whose process has gone needs no answer.
func answerOne(listener int) {
	var n notification
	if ioctl(listener, unix.SECCOMP_IOCTL_NOTIF_RECV, unsafe.Pointer(&n)) != nil {
		return
	}
	r := response{ID: n.ID, Flags: unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE}
	// The process's memory and fds are read while it waits; the id still valid after says they were its own.
	if destroysSocket(n) && ioctl(listener, unix.SECCOMP_IOCTL_NOTIF_ID_VALID, unsafe.Pointer(&n.ID)) == nil {
		r = response{ID: n.ID, Error: -int32(unix.EOPNOTSUPP)}
	}
	_ = ioctl(listener, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&r))
}

// destroysSocket tells whether the sendto is a SOCK_DESTROY request on a sock_diag socket.
func destroysSocket(n notification) bool {
	fd, buf, length := n.Args[0], n.Args[1], n.Args[2]
	if n.Nr != unix.SYS_SENDTO || length < unix.NLMSG_HDRLEN {
		return false
	}
	header := make([]byte, unix.NLMSG_HDRLEN)
	mem, err := os.Open(fmt.Sprintf("/proc/%d/mem", n.PID))
	if err != nil {
		return false
	}
	defer mem.Close()
	if _, err := mem.ReadAt(header, int64(buf)); err != nil {
		return false
	}
	return binary.LittleEndian.Uint16(header[4:6]) == unix.SOCK_DESTROY &&
		netlinkProtocol(n.PID, fd) == unix.NETLINK_SOCK_DIAG
}

// netlinkProtocol is the protocol of process pid's netlink socket fd, from its network namespace's
// /proc/net/netlink (-1: not found). The kernel's own ids mean more than one family: SOCK_DESTROY is also
// RTM_DELADDR's number.
func netlinkProtocol(pid uint32, fd uint64) int {
	link, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%d", pid, fd))
	inode, ok := strings.CutPrefix(link, "socket:[")
	if err != nil || !ok {
		return -1
	}
	inode = strings.TrimSuffix(inode, "]")
	table, err := os.Open(fmt.Sprintf("/proc/%d/net/netlink", pid))
	if err != nil {
		return -1
	}
	defer table.Close()
	lines := bufio.NewScanner(table)
	for lines.Scan() {
		// sk Eth Pid Groups Rmem Wmem Dump Locks Drops Inode
		fields := strings.Fields(lines.Text())
		if len(fields) >= 10 && fields[9] == inode {
			protocol, err := strconv.Atoi(fields[1])
			if err == nil {
				return protocol
			}
		}
	}
	return -1
}

func ioctl(fd int, request uint, arg unsafe.Pointer) error {
	if _, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(request), uintptr(arg)); errno != 0 {
		return errno
	}
	return nil
}
