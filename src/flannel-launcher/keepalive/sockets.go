package keepalive

import (
	"strconv"
	"strings"
)

// socketFD is one of a process's descriptors that names a socket.
type socketFD struct {
	fd    int
	inode uint64
}

// socketInode reads "socket:[12345]".
func socketInode(target string) (uint64, bool) {
	digits, found := strings.CutPrefix(target, "socket:[")
	if !found {
		return 0, false
	}
	inode, err := strconv.ParseUint(strings.TrimSuffix(digits, "]"), 10, 64)
	return inode, err == nil
}
