package regularfile_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/regularfile"
)

var _ = Describe("Read", func() {
	var path string

	// readInTime reads path and fails the spec if that does not end soon (a reader stuck on a pipe).
	readInTime := func(limit int) ([]byte, fs.FileInfo, error) {
		type result struct {
			data []byte
			info fs.FileInfo
			err  error
		}
		done := make(chan result, 1)
		go func() {
			data, info, err := regularfile.Read("test file", path, limit)
			done <- result{data, info, err}
		}()
		var r result
		Eventually(done).Should(Receive(&r))
		return r.data, r.info, r.err
	}

	BeforeEach(func() {
		path = filepath.Join(GinkgoT().TempDir(), "file")
	})

	It("returns the content of a regular file up to the limit, and what fstat says of it", func() {
		Expect(os.WriteFile(path, []byte("abc"), 0o640)).To(Succeed())
		data, info, err := readInTime(3)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(data)).To(Equal("abc"))
		Expect(info.Mode().Perm()).To(Equal(os.FileMode(0o640)))
	})

	It("says that a missing file is missing", func() {
		_, _, err := readInTime(3)
		Expect(err).To(MatchError(fs.ErrNotExist))
	})

	It("refuses a file longer than the limit, giving the limit in bytes or KiB", func() {
		Expect(os.WriteFile(path, []byte("abcd"), 0o600)).To(Succeed())
		_, _, err := readInTime(3)
		Expect(err).To(MatchError("The test file '" + path + "' is larger than 3 bytes"))
		Expect(os.WriteFile(path, []byte(strings.Repeat("x", 2049)), 0o600)).To(Succeed())
		_, _, err = readInTime(2048)
		Expect(err).To(MatchError("The test file '" + path + "' is larger than 2 KiB"))
	})

	It("refuses a link instead of following it, also to /dev/zero, which has no end", func() {
		Expect(os.Symlink("/dev/zero", path)).To(Succeed())
		_, _, err := readInTime(3)
		Expect(err).To(MatchError("The test file '" + path + "' is a symbolic link"))
	})

	It("refuses a named pipe at once instead of waiting for a writer", func() {
		Expect(syscall.Mkfifo(path, 0o600)).To(Succeed())
		DeferCleanup(func() { // lets a reader stuck in open() go on
			if pipe, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				pipe.Close()
			}
		})
		_, _, err := readInTime(3)
		Expect(err).To(MatchError("The test file '" + path + "' is not a regular file but a named pipe"))
	})

	It("refuses a directory and a device", func() {
		Expect(os.Mkdir(path, 0o700)).To(Succeed())
		_, _, err := readInTime(3)
		Expect(err).To(MatchError("The test file '" + path + "' is not a regular file but a directory"))
		path = "/dev/null"
		_, _, err = readInTime(3)
		Expect(err).To(MatchError("The test file '/dev/null' is not a regular file but a device"))
	})
})
