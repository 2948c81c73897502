package status_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/status"
)

var _ = Describe("the status file", func() {
	var path string

	BeforeEach(func() {
		path = filepath.Join(GinkgoT().TempDir(), "status.json")
	})

	It("reads back what was written, as JSON with the documented keys, readable by its owner only", func() {
		want := status.Status{State: status.Retrying, Reason: "attempt 2: no etcd member answered", FlanneldPID: 9,
			Started: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC), Updated: time.Date(2030, 1, 2, 3, 4, 9, 0, time.UTC)}
		Expect(status.Write(path, want)).To(Succeed())
		Expect(status.Read(path)).To(Equal(want))
		Expect(os.ReadFile(path)).To(MatchJSON(`{"state": "retrying", "reason": "attempt 2: no etcd member answered",
			"flanneld_pid": 9, "started": "2030-01-02T03:04:05Z", "updated": "2030-01-02T03:04:09Z"}`))
		info, err := os.Stat(path)
		Expect(err).NotTo(HaveOccurred())
		Expect(info.Mode().Perm()).To(Equal(os.FileMode(0o600)))
	})

	It("replaces the file in one step and leaves no temporary file behind", func() {
		Expect(status.Write(path, status.Status{State: status.Starting})).To(Succeed())
		before, err := os.Stat(path)
		Expect(err).NotTo(HaveOccurred())
		Expect(status.Write(path, status.Status{State: status.Ready})).To(Succeed())
		after, err := os.Stat(path)
		Expect(err).NotTo(HaveOccurred())
		Expect(os.SameFile(before, after)).To(BeFalse(), "a new file renamed over the old one")
		Expect(os.ReadDir(filepath.Dir(path))).To(HaveLen(1))
	})

	It("shows a status as its state and reason", func() {
		Expect(status.Status{State: status.Starting}.String()).To(Equal("starting"))
		Expect(status.Status{State: status.Failed, Reason: "flanneld exited with status 1"}.String()).To(Equal("failed: flanneld exited with status 1"))
	})

	It("says that a missing file is missing, and names a file that is not a status", func() {
		_, err := status.Read(path)
		Expect(err).To(MatchError(os.ErrNotExist))
		Expect(os.WriteFile(path, []byte("ready"), 0o600)).To(Succeed())
		_, err = status.Read(path)
		Expect(err).To(MatchError(ContainSubstring("Parsing the status file '" + path + "'")))
	})

	// wait-ready reads the file as root, in a directory that flanneld's container (vcap) can write.
	Describe("whatever else is at the path", func() {
		readInTime := func() error {
			done := make(chan error, 1)
			go func() {
				_, err := status.Read(path)
				done <- err
			}()
			var err error
			Eventually(done).Should(Receive(&err))
			return err
		}

		It("refuses a named pipe at once instead of waiting for a writer", func() {
			Expect(syscall.Mkfifo(path, 0o600)).To(Succeed())
			DeferCleanup(unblockReader, path)
			Expect(readInTime()).To(MatchError(ContainSubstring("'" + path + "' is not a regular file but a named pipe")))
		})

		It("refuses a link instead of following it, also to /dev/zero, which has no end", func() {
			Expect(os.Symlink("/dev/zero", path)).To(Succeed())
			Expect(readInTime()).To(MatchError(ContainSubstring("'" + path + "' is a symbolic link")))
		})

		It("refuses a link to a status file", func() {
			target := filepath.Join(filepath.Dir(path), "elsewhere.json")
			Expect(status.Write(target, status.Status{State: status.Ready})).To(Succeed())
			Expect(os.Symlink(target, path)).To(Succeed())
			Expect(readInTime()).To(MatchError(ContainSubstring("is a symbolic link")))
		})

		It("refuses a directory", func() {
			Expect(os.Mkdir(path, 0o700)).To(Succeed())
			Expect(readInTime()).To(MatchError(ContainSubstring("'" + path + "' is not a regular file but a directory")))
		})

		It("refuses a file larger than 64 KiB without parsing it", func() {
			large := strings.Repeat(" ", 64<<10) + `{"state": "ready"}`
			Expect(os.WriteFile(path, []byte(large), 0o600)).To(Succeed())
			Expect(readInTime()).To(MatchError(ContainSubstring("'" + path + "' is larger than 64 KiB")))
		})

		It("reads a status of 64 KiB", func() {
			data := []byte(`{"state": "retrying", "reason": "` + strings.Repeat("x", 64<<10-35) + `"}`)
			Expect(data).To(HaveLen(64 << 10))
			Expect(os.WriteFile(path, data, 0o600)).To(Succeed())
			Expect(status.Read(path)).To(HaveField("State", status.Retrying))
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
