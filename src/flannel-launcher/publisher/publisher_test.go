package publisher_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	boshlog "github.com/cloudfoundry/bosh-utils/logger"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/publisher"
	"github.com/flannel-dns/flannel-dns/src/testenv/testlog"
)

const (
	flanneldWrote = "FLANNEL_NETWORK=198.18.0.0/15\nFLANNEL_SUBNET=198.18.3.1/24\nFLANNEL_MTU=1450\nFLANNEL_IPMASQ=true\n"
	newLease      = "FLANNEL_NETWORK=198.18.0.0/15\nFLANNEL_SUBNET=198.18.9.1/24\nFLANNEL_MTU=1450\nFLANNEL_IPMASQ=true\n"
)

// The tests run as root, as CI runs them: the publisher writes what root alone may write.
var _ = Describe("Publisher", func() {
	var (
		root, from, to string
		logger         boshlog.Logger
		logs           *gbytes.Buffer
		p              *publisher.Publisher
	)

	// flanneldWrites replaces flanneld's file as flanneld does: a new file renamed over the old one.
	flanneldWrites := func(content string) {
		tmp := from + ".tmp"
		Expect(os.WriteFile(tmp, []byte(content), 0o644)).To(Succeed())
		Expect(os.Rename(tmp, from)).To(Succeed())
	}
	published := func() string {
		data, err := os.ReadFile(to)
		Expect(err).NotTo(HaveOccurred())
		return string(data)
	}
	inode := func(path string) uint64 {
		info, err := os.Lstat(path)
		Expect(err).NotTo(HaveOccurred())
		return info.Sys().(*syscall.Stat_t).Ino
	}

	BeforeEach(func() {
		Expect(os.Getuid()).To(BeZero(), "the tests run as root, as CI runs them")
		root = GinkgoT().TempDir()
		Expect(os.Mkdir(filepath.Join(root, "flanneld"), 0o750)).To(Succeed())
		from = filepath.Join(root, "flanneld", "subnet.env")
		to = filepath.Join(root, "flannel", "subnet.env")
		logger, logs = testlog.New()
		var err error
		p, err = publisher.New(from, to, "", logger)
		Expect(err).NotTo(HaveOccurred())
	})

	It("publishes flanneld's file, written again from its values, root's alone, readable by all", func() {
		lines := strings.SplitAfter(flanneldWrote, "\n")
		flanneldWrites(lines[3] + lines[2] + lines[1] + lines[0])
		Expect(p.Sync()).To(Succeed())
		Expect(published()).To(Equal(flanneldWrote))
		info, err := os.Stat(to)
		Expect(err).NotTo(HaveOccurred())
		Expect(info.Mode()).To(Equal(os.FileMode(0o644)))
		Expect(info.Sys().(*syscall.Stat_t).Uid).To(BeZero())
		Expect(logs).To(gbytes.Say(`Published '` + to + `' from '` + from + `': FLANNEL_NETWORK=198.18.0.0/15 ` +
			`FLANNEL_SUBNET=198.18.3.1/24 FLANNEL_MTU=1450 FLANNEL_IPMASQ=true`))
		Expect(os.ReadDir(filepath.Dir(to))).To(HaveLen(1), "no temporary file left")
	})

	It("publishes each file flanneld writes anew, a new lease or the same values after a restart, in one step", func() {
		flanneldWrites(flanneldWrote)
		Expect(p.Sync()).To(Succeed())
		before := inode(to)
		Expect(p.Sync()).To(Succeed())
		Expect(inode(to)).To(Equal(before), "nothing new from flanneld, nothing written")
		flanneldWrites(flanneldWrote)
		Expect(p.Sync()).To(Succeed())
		Expect(inode(to)).NotTo(Equal(before), "written again, as flanneld wrote its file again")
		flanneldWrites(newLease)
		Expect(p.Sync()).To(Succeed())
		Expect(published()).To(Equal(newLease))
	})

	It("takes a change made in place", func() {
		flanneldWrites(flanneldWrote)
		Expect(p.Sync()).To(Succeed())
		Expect(os.WriteFile(from, []byte(newLease), 0o644)).To(Succeed())
		Expect(p.Sync()).To(Succeed())
		Expect(published()).To(Equal(newLease))
	})

	It("does nothing while flanneld has written no file, and keeps the copy once flanneld's is gone", func() {
		Expect(p.Sync()).To(Succeed())
		Expect(to).NotTo(BeAnExistingFile())
		flanneldWrites(flanneldWrote)
		Expect(p.Sync()).To(Succeed())
		Expect(os.Remove(from)).To(Succeed())
		Expect(p.Sync()).To(Succeed())
		Expect(published()).To(Equal(flanneldWrote))
	})

	It("reads flanneld's file again at the next look when reading it failed for a while, here with too many open files", func() {
		flanneldWrites(flanneldWrote)
		var limit syscall.Rlimit
		Expect(syscall.Getrlimit(syscall.RLIMIT_NOFILE, &limit)).To(Succeed())
		DeferCleanup(func() { Expect(syscall.Setrlimit(syscall.RLIMIT_NOFILE, &limit)).To(Succeed()) })
		none := limit
		none.Cur = 0
		Expect(syscall.Setrlimit(syscall.RLIMIT_NOFILE, &none)).To(Succeed())
		err := p.Sync()
		Expect(syscall.Setrlimit(syscall.RLIMIT_NOFILE, &limit)).To(Succeed())
		Expect(err).To(MatchError(ContainSubstring("too many open files")))
		Expect(to).NotTo(BeAnExistingFile())
		Expect(p.Sync()).To(Succeed())
		Expect(published()).To(Equal(flanneldWrote))
	})

	It("publishes again, at the next mark, what someone removed from the copy or changed in it", func() {
		flanneldWrites(flanneldWrote)
		marks := make(chan time.Time)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); p.Run(ctx, nil, marks) }()
		DeferCleanup(func() { cancel(); Eventually(done).Should(BeClosed()) })
		copied := func() ([]byte, error) { return os.ReadFile(to) }
		Eventually(copied).Should(BeEquivalentTo(flanneldWrote))

		Expect(os.Remove(to)).To(Succeed())
		marks <- time.Now()
		Eventually(copied).Should(BeEquivalentTo(flanneldWrote))
		Expect(logs).To(gbytes.Say(`WARN - Published '` + to + `' again, as it no longer held what was published \(open ` + to +
			`: no such file or directory\): FLANNEL_NETWORK=198.18.0.0/15 FLANNEL_SUBNET=198.18.3.1/24`))

		Expect(os.WriteFile(to, []byte(newLease), 0o644)).To(Succeed())
		marks <- time.Now()
		Eventually(copied).Should(BeEquivalentTo(flanneldWrote))
		Expect(logs).To(gbytes.Say(`WARN - Published '` + to + `' again, as it no longer held what was published \(it holds ` +
			`FLANNEL_NETWORK=198.18.0.0/15 FLANNEL_SUBNET=198.18.9.1/24`))
	})

	DescribeTable("refuses a file that flanneld does not write, once, and the copy stays as it was",
		func(plant func(), message string) {
			flanneldWrites(flanneldWrote)
			Expect(p.Sync()).To(Succeed())
			plant()
			err := p.Sync()
			var refused *publisher.RefusedError
			Expect(err).To(BeAssignableToTypeOf(refused))
			Expect(err).To(MatchError(ContainSubstring("Not publishing flanneld's subnet file, '" + to + "' stays as it is: ")))
			Expect(err).To(MatchError(ContainSubstring(message)))
			Expect(p.Sync()).To(Succeed(), "refused once, not at every look")
			Expect(published()).To(Equal(flanneldWrote))
		},
		Entry("a command substitution", func() {
			flanneldWrites(strings.Replace(newLease, "1450", "$(touch /tmp/owned)", 1))
		}, `FLANNEL_MTU must be a whole number from 576 to 65535, got "$(touch /tmp/owned)"`),
		Entry("a symbolic link", func() {
			Expect(os.WriteFile(from+".real", []byte(newLease), 0o644)).To(Succeed())
			Expect(os.Remove(from)).To(Succeed())
			Expect(os.Symlink(from+".real", from)).To(Succeed())
		}, "is a symbolic link"),
		Entry("a named pipe", func() {
			Expect(os.Remove(from)).To(Succeed())
			Expect(syscall.Mkfifo(from, 0o644)).To(Succeed())
		}, "is not a regular file but a named pipe"),
	)

	It("makes the copy's directory, root's, readable by all, whatever the umask", func() {
		old := syscall.Umask(0o077)
		defer syscall.Umask(old)
		flanneldWrites(flanneldWrote)
		Expect(p.Sync()).To(Succeed())
		info, err := os.Lstat(filepath.Dir(to))
		Expect(err).NotTo(HaveOccurred())
		Expect(info.Mode()).To(Equal(os.ModeDir | 0o755))
		Expect(info.Sys().(*syscall.Stat_t).Uid).To(BeZero())
	})

	// bin/start takes the directory back from an older release that gave it to flanneld; until then the
	// publisher writes nothing there, and says why once.
	DescribeTable("writes nothing into a directory that root alone cannot write, and tries again until it can",
		func(plant func(dir string), message string) {
			dir := filepath.Dir(to)
			Expect(os.Mkdir(dir, 0o755)).To(Succeed())
			plant(dir)
			flanneldWrites(flanneldWrote)
			ticks := make(chan time.Time)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() {
				defer close(done)
				p.Run(ctx, ticks, nil)
			}()
			DeferCleanup(func() { cancel(); Eventually(done).Should(BeClosed()) })
			ticks <- time.Now()
			ticks <- time.Now()
			Expect(filepath.Join(dir, "subnet.env")).NotTo(BeAnExistingFile())
			Expect(os.RemoveAll(dir)).To(Succeed()) // as bin/start does; the publisher makes it again
			ticks <- time.Now()
			ticks <- time.Now()
			Eventually(published).Should(Equal(flanneldWrote))
			Expect(strings.Count(string(logs.Contents()), "ERROR")).To(Equal(1), string(logs.Contents()))
			Expect(string(logs.Contents())).To(ContainSubstring("ERROR - Writing '" + to + "': '" + dir +
				"' is not a directory that root alone can write (" + message))
		},
		Entry("another user's", func(dir string) { Expect(os.Chown(dir, 65534, 65534)).To(Succeed()) }, "drwxr-xr-x, owner uid 65534)"),
		Entry("root's but open to all", func(dir string) { Expect(os.Chmod(dir, 0o777)).To(Succeed()) }, "drwxrwxrwx, owner uid 0)"),
		Entry("a link to root's directory", func(dir string) {
			Expect(os.Remove(dir)).To(Succeed())
			Expect(os.Mkdir(dir+".real", 0o755)).To(Succeed())
			Expect(os.Symlink(dir+".real", dir)).To(Succeed())
		}, "Lrwxrwxrwx, owner uid 0)"),
	)

	DescribeTable("New refuses paths it cannot keep apart",
		func(from, to, message string) {
			_, err := publisher.New(from, to, "", logger)
			Expect(err).To(MatchError(message))
		},
		Entry("both in one directory", "/run/x/a.env", "/run/x/b.env",
			"'/run/x/a.env' and '/run/x/b.env' are in the same directory: the copy's must be root's alone"),
		Entry("a relative path", "subnet.env", "/run/flannel/subnet.env", "'subnet.env' is not a clean absolute path to a file"),
		Entry("a path with '..'", "/var/a/subnet.env", "/run/flannel/../subnet.env",
			"'/run/flannel/../subnet.env' is not a clean absolute path to a file"),
		Entry("the root", "/var/a/subnet.env", "/", "'/' is not a clean absolute path to a file"),
	)
})
