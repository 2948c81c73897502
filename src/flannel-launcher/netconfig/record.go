package netconfig

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
	"github.com/google/renameio/v2"
)

// Record is the file in which a node keeps which desired config it last enforced: a digest of the key and the
// config, nothing secret. BOSH renders nothing that orders one deploy before another, so a node cannot tell
// by content whether its desired config is older or newer than the stored one; the record lets it enforce once
// per change of its own desired config instead (see Ensure).
type Record struct {
	Path string
}

// Holds tells whether the record names this desired config at key. A missing record holds nothing, and so
// does one that cannot be read, is not a regular file (a symlink is never followed) or is garbled; for those
// the error says why.
func (r Record) Holds(key string, desired []byte) (bool, error) {
	content, err := r.read()
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return false, nil
		}
		return false, bosherr.WrapErrorf(err, "Reading the enforce record '%s'", r.Path)
	}
	return string(content) == digest(key, desired), nil
}

// read opens without following a symlink and without blocking on a FIFO, and reads at most a little more
// than a record can hold.
func (r Record) read() ([]byte, error) {
	file, err := os.OpenFile(r.Path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	info, err := file.Stat()
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	return io.ReadAll(io.LimitReader(file, recordLimit))
}

// recordLimit is more than a record's digest line, so that a longer file reads as garbled, not as a match.
const recordLimit = 256

// Save replaces the record by one that names this desired config at key, in one step (a new file, mode 0600,
// renamed over the old one; a symlink there is replaced, not followed).
func (r Record) Save(key string, desired []byte) error {
	file, err := renameio.NewPendingFile(r.Path, renameio.WithTempDir(filepath.Dir(r.Path)), renameio.WithStaticPermissions(0o600))
	if err != nil {
		return bosherr.WrapErrorf(err, "Writing the enforce record '%s'", r.Path)
	}
	defer file.Cleanup()
	if _, err := io.WriteString(file, digest(key, desired)); err != nil {
		return bosherr.WrapErrorf(err, "Writing the enforce record '%s'", r.Path)
	}
	if err := file.CloseAtomicallyReplace(); err != nil {
		return bosherr.WrapErrorf(err, "Writing the enforce record '%s'", r.Path)
	}
	return nil
}

// Remove deletes the record (a symlink there is removed itself); a missing one is no error.
func (r Record) Remove() error {
	if err := os.Remove(r.Path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return bosherr.WrapErrorf(err, "Removing the enforce record '%s'", r.Path)
	}
	return nil
}

func digest(key string, desired []byte) string {
	sum := sha256.New()
	sum.Write([]byte(key))
	sum.Write([]byte{0})
	sum.Write(desired)
	return fmt.Sprintf("sha256:%x\n", sum.Sum(nil))
}
