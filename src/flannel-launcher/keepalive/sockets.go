package keepalive

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
)

// Socket is one of a process's TCP sockets.
type Socket struct {
	FD    int
	Inode uint64
	Peer  *net.TCPAddr
}

const listenState = "0A"

// Sockets lists the TCP sockets (IPv4 and IPv6) that process pid holds to remotePort, listeners left out.
// procRoot is normally "/proc".
func Sockets(procRoot string, pid, remotePort int) ([]Socket, error) {
	peers := map[uint64]*net.TCPAddr{}
	for _, table := range []string{"tcp", "tcp6"} {
		if err := readTable(filepath.Join(procRoot, strconv.Itoa(pid), "net", table), remotePort, peers); err != nil {
			return nil, err
		}
	}
	if len(peers) == 0 {
		return nil, nil
	}
	return matchFDs(filepath.Join(procRoot, strconv.Itoa(pid), "fd"), peers)
}

// readTable adds the inode and peer of each row of a /proc/<pid>/net/tcp{,6} table whose remote port matches.
// The table holds every socket of the process's network namespace; matchFDs keeps the process's own.
func readTable(path string, remotePort int, peers map[uint64]*net.TCPAddr) error {
	file, err := os.Open(path)
	if err != nil {
		return bosherr.WrapErrorf(err, "Opening '%s'", path)
	}
	defer file.Close()
	scanner := bufio.NewScanner(file)
	scanner.Scan() // the header
	for scanner.Scan() {
		fields := strings.Fields(scanner.Text())
		if len(fields) < 10 || fields[3] == listenState {
			continue
		}
		peer, err := parseAddress(fields[2])
		if err != nil {
			return bosherr.WrapErrorf(err, "Reading '%s'", path)
		}
		if peer.Port != remotePort {
			continue
		}
		inode, err := strconv.ParseUint(fields[9], 10, 64)
		if err != nil {
			return bosherr.WrapErrorf(err, "Reading the inode in '%s'", path)
		}
		peers[inode] = peer
	}
	if err := scanner.Err(); err != nil {
		return bosherr.WrapErrorf(err, "Reading '%s'", path)
	}
	return nil
}

// parseAddress reads "0100007F:0959": the address as the kernel's 32-bit words in host byte order, then the
// port, both in hex.
func parseAddress(field string) (*net.TCPAddr, error) {
	hexIP, hexPort, found := strings.Cut(field, ":")
	raw, err := hex.DecodeString(hexIP)
	if !found || err != nil || (len(raw) != net.IPv4len && len(raw) != net.IPv6len) {
		return nil, bosherr.Errorf("Bad address '%s'", field)
	}
	port, err := strconv.ParseUint(hexPort, 16, 16)
	if err != nil {
		return nil, bosherr.Errorf("Bad port in address '%s'", field)
	}
	ip := make(net.IP, len(raw))
	for i := 0; i < len(raw); i += 4 {
		binary.NativeEndian.PutUint32(ip[i:], binary.BigEndian.Uint32(raw[i:]))
	}
	return &net.TCPAddr{IP: ip, Port: int(port)}, nil
}

// matchFDs finds which of the process's descriptors are the sockets in peers.
func matchFDs(fdDir string, peers map[uint64]*net.TCPAddr) ([]Socket, error) {
	entries, err := os.ReadDir(fdDir)
	if err != nil {
		return nil, bosherr.WrapErrorf(err, "Listing '%s'", fdDir)
	}
	var sockets []Socket
	for _, entry := range entries {
		target, err := os.Readlink(filepath.Join(fdDir, entry.Name()))
		if err != nil {
			continue // closed since the listing
		}
		inode, ok := socketInode(target)
		if peer, found := peers[inode]; ok && found {
			fd, _ := strconv.Atoi(entry.Name())
			sockets = append(sockets, Socket{FD: fd, Inode: inode, Peer: peer})
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
