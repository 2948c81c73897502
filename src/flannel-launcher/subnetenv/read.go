package subnetenv

import (
	"io/fs"
	"syscall"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/regularfile"
)

// Read reads and parses the subnet file at path as root may read what flanneld (vcap) wrote: it follows no
// link, does not wait on a named pipe, reads at most MaxSize bytes, and refuses a file with another name (a
// hard link passes off another file of the filesystem as this one). A missing file gives an error that
// errors.Is(fs.ErrNotExist).
func Read(path string) (Env, error) {
	env, _, err := read("subnet file", path)
	return env, err
}

// ReadPublished is Read for the copy that docker's job and the CNI plugin read: it must also be root's and
// writable by root only.
func ReadPublished(path string) (Env, error) {
	env, info, err := read("published subnet file", path)
	if err != nil {
		return Env{}, err
	}
	if uid := info.Sys().(*syscall.Stat_t).Uid; uid != 0 || info.Mode().Perm()&0o022 != 0 {
		return Env{}, bosherr.Errorf("The published subnet file '%s' is not root's alone (owner uid %d, mode %s)",
			path, uid, info.Mode().Perm())
	}
	return env, nil
}

func read(what, path string) (Env, fs.FileInfo, error) {
	data, info, err := regularfile.Read(what, path, MaxSize)
	if err != nil {
		return Env{}, nil, err
	}
	if links := info.Sys().(*syscall.Stat_t).Nlink; links != 1 {
		return Env{}, nil, bosherr.Errorf("The %s '%s' has %d names (hard links), not one", what, path, links)
	}
	env, err := Parse(data)
	if err != nil {
		return Env{}, nil, bosherr.WrapErrorf(err, "The %s '%s' is not as flanneld writes it", what, path)
	}
	return env, info, nil
}
