package status_test

import (
	"os"
	"path/filepath"
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
})
