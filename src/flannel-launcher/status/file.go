package status

import (
	"encoding/json"
	"os"
	"path/filepath"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/regularfile"
)

// Write replaces the file at path in one step (a new file renamed over the old one), so that a reader sees
// the old status or the new one, never half of one. The file is readable by its owner only (root reads it).
func Write(path string, s Status) error {
	data, err := json.Marshal(s)
	if err != nil {
		return bosherr.WrapError(err, "Encoding the status")
	}
	if err := replace(path, append(data, '\n')); err != nil {
		return bosherr.WrapErrorf(err, "Writing the status file '%s'", path)
	}
	return nil
}

func replace(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// maxSize bounds what Read takes from the file; a status is a few hundred bytes.
const maxSize = 64 << 10

// Read returns the status in the file at path. A missing file gives an error that errors.Is(os.ErrNotExist).
// wait-ready reads it as root in a directory that flanneld's container (vcap) can write, so Read accepts only
// a regular file of at most 64 KiB: it follows no link and does not wait for a writer (a named pipe).
func Read(path string) (Status, error) {
	var s Status
	data, _, err := regularfile.Read("status file", path, maxSize)
	if err != nil {
		return s, err
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return s, bosherr.WrapErrorf(err, "Parsing the status file '%s'", path)
	}
	return s, nil
}
