package status

import (
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
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
	data, err := readRegular(path)
	if err != nil {
		return s, err
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return s, bosherr.WrapErrorf(err, "Parsing the status file '%s'", path)
	}
	return s, nil
}

func readRegular(path string) ([]byte, error) {
	file, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if errors.Is(err, syscall.ELOOP) {
		return nil, bosherr.Errorf("The status file '%s' is a symbolic link", path)
	} else if err != nil {
		return nil, err
	}
	defer file.Close()
	info, err := file.Stat()
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, bosherr.Errorf("The status file '%s' is not a regular file but %s", path, kind(info.Mode()))
	}
	data, err := io.ReadAll(io.LimitReader(file, maxSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxSize {
		return nil, bosherr.Errorf("The status file '%s' is larger than %d KiB", path, maxSize>>10)
	}
	return data, nil
}

func kind(mode fs.FileMode) string {
	switch mode.Type() {
	case fs.ModeDir:
		return "a directory"
	case fs.ModeNamedPipe:
		return "a named pipe"
	case fs.ModeSocket:
		return "a socket"
	case fs.ModeDevice, fs.ModeDevice | fs.ModeCharDevice:
		return "a device"
	}
	return "of mode " + mode.String()
}
