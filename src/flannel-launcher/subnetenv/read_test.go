package subnetenv_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/subnetenv"
)

// Root reads these files in a directory that flanneld's container (vcap) can write.
var _ = Describe("Read", func() {
	var dir, path string

	// readInTime reads path with read and fails the spec if that does not end soon (a reader stuck on a pipe).
	readInTime := func(read func(string) (subnetenv.Env, error)) error {
		done := make(chan error, 1)
		go func() {
			_, err := read(path)
			done <- err
		}()
		var err error
		Eventually(done).Should(Receive(&err))
		return err
	}

	BeforeEach(func() {
		dir = GinkgoT().TempDir()
		path = filepath.Join(dir, "subnet.env")
	})

	It("reads flanneld's file", func() {
		Expect(os.WriteFile(path, []byte(flanneldWrote), 0o644)).To(Succeed())
		Expect(subnetenv.Read(path)).To(Equal(flanneldEnv))
	})

	It("says that a missing file is missing", func() {
		_, err := subnetenv.Read(path)
		Expect(err).To(MatchError(fs.ErrNotExist))
	})

	It("names the file and what is wrong in it", func() {
		Expect(os.WriteFile(path, []byte(with("FLANNEL_MTU", "FLANNEL_MTU=`id`\n")), 0o644)).To(Succeed())
		Expect(readInTime(subnetenv.Read)).To(MatchError("The subnet file '" + path +
			"' is not as flanneld writes it: FLANNEL_MTU must be a whole number from 576 to 65535, got \"`id`\""))
	})

	It("does not follow a symbolic link, even to a good file", func() {
		target := filepath.Join(dir, "elsewhere.env")
		Expect(os.WriteFile(target, []byte(flanneldWrote), 0o644)).To(Succeed())
		Expect(os.Symlink(target, path)).To(Succeed())
		Expect(readInTime(subnetenv.Read)).To(MatchError("The subnet file '" + path + "' is a symbolic link"))
	})

	It("does not wait for a writer at a named pipe", func() {
		Expect(syscall.Mkfifo(path, 0o644)).To(Succeed())
		DeferCleanup(unblockReader, path)
		Expect(readInTime(subnetenv.Read)).To(MatchError("The subnet file '" + path + "' is not a regular file but a named pipe"))
	})

	It("does not read more than 512 bytes", func() {
		Expect(os.WriteFile(path, []byte(flanneldWrote+strings.Repeat("#", 1<<20)), 0o644)).To(Succeed())
		Expect(readInTime(subnetenv.Read)).To(MatchError("The subnet file '" + path + "' is larger than 512 bytes"))
	})

	It("refuses a hard link, which could pass off another file of the filesystem", func() {
		target := filepath.Join(dir, "elsewhere.env")
		Expect(os.WriteFile(target, []byte(flanneldWrote), 0o644)).To(Succeed())
		Expect(os.Link(target, path)).To(Succeed())
		Expect(readInTime(subnetenv.Read)).To(MatchError("The subnet file '" + path + "' has 2 names (hard links), not one"))
	})

	Describe("the published copy", func() {
		BeforeEach(func() {
			Expect(os.WriteFile(path, []byte(flanneldWrote), 0o644)).To(Succeed())
			Expect(os.Chmod(path, 0o644)).To(Succeed()) // whatever the umask
		})

		It("reads root's file", func() {
			Expect(os.Getuid()).To(BeZero(), "the tests run as root, as CI runs them")
			Expect(subnetenv.ReadPublished(path)).To(Equal(flanneldEnv))
		})

		It("refuses a file that another user owns", func() {
			Expect(os.Chown(path, 65534, 65534)).To(Succeed())
			Expect(readInTime(subnetenv.ReadPublished)).To(MatchError("The published subnet file '" + path +
				"' is not root's alone (owner uid 65534, mode -rw-r--r--)"))
		})

		It("refuses a file that others may write", func() {
			Expect(os.Chmod(path, 0o664)).To(Succeed())
			Expect(readInTime(subnetenv.ReadPublished)).To(MatchError("The published subnet file '" + path +
				"' is not root's alone (owner uid 0, mode -rw-rw-r--)"))
		})

		It("reads it with the same care", func() {
			Expect(os.Remove(path)).To(Succeed())
			Expect(syscall.Mkfifo(path, 0o644)).To(Succeed())
			DeferCleanup(unblockReader, path)
			Expect(readInTime(subnetenv.ReadPublished)).To(MatchError(ContainSubstring("is not a regular file but a named pipe")))
		})
	})
})

// unblockReader opens the named pipe at path for writing, so that a reader stuck in open() goes on; with none
// there, the open fails and nothing is left to do.
func unblockReader(path string) {
	if pipe, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
		pipe.Close()
	}
}
