package netconfig_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/netconfig"
)

var _ = Describe("Record", func() {
	const key = "/coreos.com/network/config"
	var record netconfig.Record

	BeforeEach(func() {
		record = newRecord()
	})

	It("holds the config it saved at that key, and nothing else", func() {
		Expect(record.Holds(key, desired)).To(BeFalse(), "missing")
		Expect(record.Save(key, desired)).To(Succeed())

		Expect(record.Holds(key, desired)).To(BeTrue())
		Expect(record.Holds("/other/network/config", desired)).To(BeFalse())
		Expect(record.Holds(key, append([]byte(nil), desired[1:]...))).To(BeFalse())
		info, err := os.Stat(record.Path)
		Expect(err).NotTo(HaveOccurred())
		Expect(info.Mode().Perm()).To(Equal(os.FileMode(0o600)))
	})

	It("saves mode 0600 over a file that others could read", func() {
		Expect(os.WriteFile(record.Path, []byte("old"), 0o644)).To(Succeed())
		Expect(record.Save(key, desired)).To(Succeed())
		info, err := os.Stat(record.Path)
		Expect(err).NotTo(HaveOccurred())
		Expect(info.Mode().Perm()).To(Equal(os.FileMode(0o600)))
	})

	It("does not follow a symlink, neither to read nor to write, and leaves the link's target alone", func() {
		target := filepath.Join(GinkgoT().TempDir(), "target")
		Expect(netconfig.Record{Path: target}.Save(key, desired)).To(Succeed())
		before, err := os.ReadFile(target)
		Expect(err).NotTo(HaveOccurred())
		Expect(os.Symlink(target, record.Path)).To(Succeed())

		holds, err := record.Holds(key, desired)
		Expect(holds).To(BeFalse())
		Expect(err).To(MatchError(ContainSubstring("Reading the enforce record '%s'", record.Path)))

		Expect(record.Save(key, []byte(`{"Network":"198.19.0.0/16"}`))).To(Succeed())
		info, err := os.Lstat(record.Path)
		Expect(err).NotTo(HaveOccurred())
		Expect(info.Mode().IsRegular()).To(BeTrue(), "the link was replaced")
		Expect(os.ReadFile(target)).To(Equal(before))
	})

	It("does not block on a FIFO and takes it for no record", func() {
		Expect(syscall.Mkfifo(record.Path, 0o600)).To(Succeed())
		holds, err := record.Holds(key, desired)
		Expect(holds).To(BeFalse())
		Expect(err).To(MatchError(ContainSubstring("not a regular file")))
	})

	It("takes a file with more than the digest for garbled, even when it starts with the right digest", func() {
		Expect(record.Save(key, desired)).To(Succeed())
		digest, err := os.ReadFile(record.Path)
		Expect(err).NotTo(HaveOccurred())
		Expect(os.WriteFile(record.Path, append(digest, strings.Repeat("x", 1<<20)...), 0o600)).To(Succeed())
		Expect(record.Holds(key, desired)).To(BeFalse())
	})

	It("is removed, also when missing, and a symlink there is removed itself", func() {
		Expect(record.Remove()).To(Succeed())
		target := filepath.Join(GinkgoT().TempDir(), "target")
		Expect(os.WriteFile(target, nil, 0o600)).To(Succeed())
		Expect(os.Symlink(target, record.Path)).To(Succeed())
		Expect(record.Remove()).To(Succeed())
		_, err := os.Lstat(record.Path)
		Expect(err).To(MatchError(os.ErrNotExist))
		Expect(target).To(BeAnExistingFile())
	})
})
