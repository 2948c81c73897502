package publisher_test

import (
	"context"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	boshlog "github.com/cloudfoundry/bosh-utils/logger"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/publisher"
	"github.com/flannel-dns/flannel-dns/src/testenv/testlog"
)

var _ = Describe("The kept copy", func() {
	var (
		root, from, to, keep string
		ready                atomic.Bool // what the launcher reports
		logs                 *gbytes.Buffer
	)

	BeforeEach(func() {
		Expect(os.Getuid()).To(BeZero(), "the tests run as root, as CI runs them")
		root = GinkgoT().TempDir()
		Expect(os.Mkdir(filepath.Join(root, "flanneld"), 0o750)).To(Succeed())
		from = filepath.Join(root, "flanneld", "subnet.env")
		to = filepath.Join(root, "run", "flannel", "subnet.env")
		keep = filepath.Join(root, "data", "subnet.env")
		Expect(os.MkdirAll(filepath.Dir(to), 0o755)).To(Succeed())
		Expect(os.MkdirAll(filepath.Dir(keep), 0o755)).To(Succeed())
		ready.Store(false)
	})
	newPublisher := func() *publisher.Publisher {
		var logger boshlog.Logger
		logger, logs = testlog.New()
		p, err := publisher.New(from, to, keep, logger)
		Expect(err).NotTo(HaveOccurred())
		p.FlanneldReady = ready.Load
		return p
	}
	publish := func(content string) *publisher.Publisher {
		p := newPublisher()
		Expect(os.WriteFile(from, []byte(content), 0o644)).To(Succeed())
		Expect(p.Sync()).To(Succeed())
		return p
	}
	modified := func(path string) time.Time {
		info, err := os.Stat(path)
		Expect(err).NotTo(HaveOccurred())
		return info.ModTime()
	}
	setModified := func(path string, at time.Time) {
		Expect(os.Chtimes(path, at, at)).To(Succeed())
	}
	// run runs p until the spec ends, marking at each time sent on the channel it returns.
	run := func(p *publisher.Publisher) chan<- time.Time {
		marks := make(chan time.Time)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); p.Run(ctx, nil, marks) }()
		DeferCleanup(func() { cancel(); Eventually(done).Should(BeClosed()) })
		return marks
	}

	It("holds what is published, and a reboot's empty /run gets it back", func() {
		publish(newLease)
		Expect(os.ReadFile(keep)).To(BeEquivalentTo(newLease))
		Expect(os.Remove(to)).To(Succeed())
		Expect(publisher.Restore(keep, to, time.Now())).To(BeTrue())
		Expect(os.ReadFile(to)).To(BeEquivalentTo(newLease))
	})

	It("leaves a published file alone: only a missing one is restored", func() {
		publish(flanneldWrote)
		Expect(os.WriteFile(keep, []byte(newLease), 0o644)).To(Succeed())
		Expect(publisher.Restore(keep, to, time.Now())).To(BeFalse())
		Expect(os.ReadFile(to)).To(BeEquivalentTo(flanneldWrote))
	})

	It("is not restored once it is older than KeepFor, when the lease may have gone, and says why", func() {
		publish(flanneldWrote)
		Expect(os.Remove(to)).To(Succeed())
		restored, err := publisher.Restore(keep, to, modified(keep).Add(publisher.KeepFor+time.Second))
		Expect(restored).To(BeFalse())
		Expect(err).To(MatchError(ContainSubstring("was last current 50m1s ago, more than 50m0s: not restored")))
		Expect(to).NotTo(BeAnExistingFile())
	})

	It("is not restored when someone other than root can write it", func() {
		publish(flanneldWrote)
		Expect(os.Remove(to)).To(Succeed())
		Expect(os.Chmod(keep, 0o666)).To(Succeed())
		_, err := publisher.Restore(keep, to, time.Now())
		Expect(err).To(MatchError(ContainSubstring("is not root's alone")))
		Expect(to).NotTo(BeAnExistingFile())
	})

	It("restores nothing, and fails nothing, when there is none (a new VM)", func() {
		Expect(publisher.Restore(keep, to, time.Now())).To(BeFalse())
		Expect(to).NotTo(BeAnExistingFile())
	})

	It("is marked current while the launcher reports flanneld ready, and not once flanneld's file is gone", func() {
		p := publish(flanneldWrote)
		setModified(from, time.Now().Add(-2*time.Hour)) // flanneld wrote its file long ago, and runs
		ready.Store(true)
		setModified(keep, time.Now().Add(-time.Hour))
		marks := run(p)

		now := time.Now().Truncate(time.Second)
		marks <- now
		Eventually(func() time.Time { return modified(keep) }).Should(BeTemporally("==", now))
		Expect(os.ReadFile(keep)).To(BeEquivalentTo(flanneldWrote))
		Expect(os.Remove(from)).To(Succeed())
		marks <- now.Add(time.Minute)
		marks <- now.Add(2 * time.Minute) // the first mark is done once Run takes the second
		Expect(modified(keep)).To(BeTemporally("==", now))
	})

	It("is not marked current while the launcher does not report flanneld ready and its file is old (a crash loop, a stop)", func() {
		p := publish(flanneldWrote)
		setModified(from, time.Now().Add(-2*time.Hour))
		old := time.Now().Add(-time.Hour).Truncate(time.Second)
		setModified(keep, old)
		marks := run(p)

		now := time.Now().Truncate(time.Second)
		marks <- now
		marks <- now.Add(time.Minute) // the first mark is done once Run takes the second
		Expect(modified(keep)).To(BeTemporally("==", old))
		ready.Store(true)
		marks <- now.Add(2 * time.Minute)
		Eventually(func() time.Time { return modified(keep) }).Should(BeTemporally("==", now.Add(2*time.Minute)))
	})

	It("is not written from an old flanneld file that the launcher does not report ready, as when the publisher restarts", func() {
		Expect(os.WriteFile(from, []byte(flanneldWrote), 0o644)).To(Succeed())
		setModified(from, time.Now().Add(-2*time.Hour))
		Expect(newPublisher().Sync()).To(Succeed())
		Expect(os.ReadFile(to)).To(BeEquivalentTo(flanneldWrote))
		Expect(keep).NotTo(BeAnExistingFile())
	})

	It("goes when it cannot be written, rather than stay marked current with an older lease", func() {
		p := publish(flanneldWrote)
		Expect(os.Chown(filepath.Dir(keep), 65534, 65534)).To(Succeed())
		Expect(os.WriteFile(from, []byte(newLease), 0o644)).To(Succeed())
		Expect(p.Sync()).To(MatchError(ContainSubstring("Writing the kept copy '" + keep + "' (the older one is removed): '" +
			filepath.Dir(keep) + "' is not a directory that root alone can write")))
		Expect(keep).NotTo(BeAnExistingFile())
		Expect(os.Remove(to)).To(Succeed())
		Expect(publisher.Restore(keep, to, time.Now())).To(BeFalse())
		Expect(to).NotTo(BeAnExistingFile())
	})

	// reboot publishes and keeps content, empties /run and /var/vcap/sys/run as a reboot does, restores the
	// kept copy, and returns when it was last marked current.
	reboot := func(content string) time.Time {
		publish(content)
		marked := modified(keep)
		Expect(os.Remove(to)).To(Succeed())
		Expect(os.Remove(from)).To(Succeed())
		Expect(publisher.Restore(keep, to, time.Now())).To(BeTrue())
		return marked
	}

	It("is withdrawn once restored, when flanneld has written no file by the end of the lease's safe window", func() {
		marked := reboot(flanneldWrote)
		marks := run(newPublisher())
		marks <- marked.Add(publisher.KeepFor - time.Second)
		marks <- marked.Add(publisher.KeepFor - time.Second) // the first mark is done once Run takes the second
		Expect(os.ReadFile(to)).To(BeEquivalentTo(flanneldWrote), "still within the window")
		marks <- marked.Add(publisher.KeepFor + time.Second)
		Eventually(to).ShouldNot(BeAnExistingFile())
		Eventually(logs).Should(gbytes.Say(`WARN - Withdrew '` + to + `', restored from the kept copy: it was last current 50m1s ago, ` +
			`more than 50m0s, and flanneld has written no subnet file since; its lease may be gone`))
	})

	It("stays once restored, followed by flanneld's own file, past the window", func() {
		marked := reboot(flanneldWrote)
		marks := run(newPublisher())
		Expect(os.WriteFile(from, []byte(newLease), 0o644)).To(Succeed())
		marks <- marked.Add(time.Minute) // flanneld's file is published once Run takes this
		marks <- marked.Add(publisher.KeepFor + time.Second)
		marks <- marked.Add(publisher.KeepFor + time.Minute)
		Expect(os.ReadFile(to)).To(BeEquivalentTo(newLease))
	})

	It("must be in another directory than flanneld's file", func() {
		logger, _ := testlog.New()
		_, err := publisher.New(from, to, filepath.Join(root, "flanneld", "kept.env"), logger)
		Expect(err).To(MatchError(ContainSubstring("are in the same directory")))
	})
})
