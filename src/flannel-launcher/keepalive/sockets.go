package keepalive

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
)

// socketFD is one of a process's descriptors that names a socket.
type socketFD struct {
	fd    int
	inode uint64
}

// socketFDs lists the descriptors of process pid that are sockets ("socket:[inode]" in /proc/<pid>/fd).
func socketFDs(procRoot string, pid int) ([]socketFD, error) {
	fdDir := filepath.Join(procRoot, strconv.Itoa(pid), "fd")
	entries, err := os.ReadDir(fdDir)
	if err != nil {
		return nil, bosherr.WrapErrorf(err, "Listing '%s'", fdDir)
	}
	var sockets []socketFD
	for _, entry := range entries {
		target, err := os.Readlink(filepath.Join(fdDir, entry.Name()))
		if err != nil {
			continue // closed since the listing
		}
		if inode, ok := socketInode(target); ok {
			fd, _ := strconv.Atoi(entry.Name())
			sockets = append(sockets, socketFD{fd: fd, inode: inode})
		}
	}
	return sockets, nil
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
