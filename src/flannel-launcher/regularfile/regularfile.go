// Package regularfile reads a small file that a less trusted user may have put in place, as root reads what
// flanneld's container (vcap) writes: a status, a subnet file.
package regularfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
)

// Read returns what the regular file at path holds and what fstat says of the file it read. It follows no
// symbolic link, does not wait for a writer (a named pipe) and reads at most limit bytes: anything but a
// regular file, and a file longer than limit, is refused with an error that calls it what ("The status file
// '/x' is a symbolic link"). A missing file gives an error that errors.Is(fs.ErrNotExist).
func Read(what, path string, limit int) ([]byte, fs.FileInfo, error) {
	file, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if errors.Is(err, syscall.ELOOP) {
		return nil, nil, bosherr.Errorf("The %s '%s' is a symbolic link", what, path)
	} else if err != nil {
		return nil, nil, err
	}
	defer file.Close()
	info, err := file.Stat()
	if err != nil {
		return nil, nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, nil, bosherr.Errorf("The %s '%s' is not a regular file but %s", what, path, kind(info.Mode()))
	}
	data, err := io.ReadAll(io.LimitReader(file, int64(limit)+1))
	if err != nil {
		return nil, nil, err
	}
	if len(data) > limit {
		return nil, nil, bosherr.Errorf("The %s '%s' is larger than %s", what, path, size(limit))
	}
	return data, info, nil
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

func size(bytes int) string {
	if bytes%1024 == 0 {
		return fmt.Sprintf("%d KiB", bytes>>10)
	}
	return fmt.Sprintf("%d bytes", bytes)
}
