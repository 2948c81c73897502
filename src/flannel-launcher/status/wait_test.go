package status_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/status"
)

var _ = Describe("Waiter", func() {
	var (
		statusFile, subnetFile, publishedFile string
		seen                                  chan status.Status
		waiter                                status.Waiter
	)

	write := func(s status.Status) {
		Expect(status.Write(statusFile, s)).To(Succeed())
	}
	// writeSubnetFile writes flanneld's subnet file and, as subnet-publisher does, its copy.
	writeSubnetFile := func() {
		Expect(os.WriteFile(subnetFile, []byte(flanneldWrote), 0o644)).To(Succeed())
		Expect(os.WriteFile(publishedFile, []byte(flanneldWrote), 0o644)).To(Succeed())
		Expect(os.Chmod(publishedFile, 0o644)).To(Succeed()) // whatever the umask
	}
	type result struct {
		status status.Status
		err    error
	}
	waitInBackground := func(timeout time.Duration) chan result {
		done := make(chan result, 1)
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		go func() {
			defer cancel()
			s, err := waiter.Wait(ctx)
			done <- result{s, err}
		}()
		return done
	}

	BeforeEach(func() {
		dir := GinkgoT().TempDir()
		statusFile = filepath.Join(dir, "status.json")
		subnetFile = filepath.Join(dir, "subnet.env")
		publishedFile = filepath.Join(dir, "published.env")
		seen = make(chan status.Status, 10)
		waiter = status.Waiter{StatusFile: statusFile, SubnetFile: subnetFile, PublishedFile: publishedFile,
			Interval: 10 * time.Millisecond, Progress: func(s status.Status) { seen <- s }}
	})

	It("waits through starting and retrying until the run is ready and the subnet file is published, telling each change once", func() {
		done := waitInBackground(10 * time.Second)
		write(status.Status{State: status.Starting})
		Eventually(seen).Should(Receive(HaveField("State", status.Starting)))
		write(status.Status{State: status.Retrying, Reason: "no etcd member answered"})
		Eventually(seen).Should(Receive(Equal(status.Status{State: status.Retrying, Reason: "no etcd member answered"})))
		Consistently(seen, 100*time.Millisecond).ShouldNot(Receive(), "the same status is told once")
		Expect(done).NotTo(Receive())

		writeSubnetFile()
		write(status.Status{State: status.Ready, Reason: "wrote it", FlanneldPID: 12})
		var got result
		Eventually(done).Should(Receive(&got))
		Expect(got.err).NotTo(HaveOccurred())
		Expect(got.status.FlanneldPID).To(Equal(12))
	})

	It("fails at once with the reason of a run that failed", func() {
		write(status.Status{State: status.Failed, Reason: "giving up on checking etcd's server certificate: x509: certificate signed by unknown authority"})
		var got result
		Eventually(waitInBackground(10 * time.Second)).Should(Receive(&got))
		Expect(got.err).To(MatchError("the launcher failed: giving up on checking etcd's server certificate: x509: certificate signed by unknown authority"))
	})

	It("fails at once when the run was stopped", func() {
		write(status.Status{State: status.Stopped, Reason: "stop signal (terminated) passed on to flanneld"})
		var got result
		Eventually(waitInBackground(10 * time.Second)).Should(Receive(&got))
		Expect(got.err).To(MatchError("the launcher was stopped: stop signal (terminated) passed on to flanneld"))
	})

	It("fails when the run says ready but the subnet file is not there", func() {
		write(status.Status{State: status.Ready})
		var got result
		Eventually(waitInBackground(10 * time.Second)).Should(Receive(&got))
		Expect(got.err).To(MatchError(SatisfyAll(ContainSubstring("subnet file is not on the host"), ContainSubstring(subnetFile))))
	})

	It("waits, once the run is ready, until the copy that docker's job reads holds what flanneld wrote", func() {
		Expect(os.WriteFile(subnetFile, []byte(flanneldWrote), 0o644)).To(Succeed())
		Expect(os.WriteFile(publishedFile, []byte(strings.Replace(flanneldWrote, "198.18.3.1", "198.18.9.1", 1)), 0o644)).To(Succeed())
		write(status.Status{State: status.Ready})
		done := waitInBackground(10 * time.Second)
		Consistently(done, 200*time.Millisecond).ShouldNot(Receive(), "a copy of an earlier lease")
		Expect(os.Chown(publishedFile, 65534, 65534)).To(Succeed())
		writeSubnetFile()
		Expect(os.Chown(publishedFile, 65534, 65534)).To(Succeed())
		Consistently(done, 200*time.Millisecond).ShouldNot(Receive(), "a copy that vcap could have written")
		Expect(os.Chown(publishedFile, 0, 0)).To(Succeed())
		var got result
		Eventually(done).Should(Receive(&got))
		Expect(got.err).NotTo(HaveOccurred())
	})

	It("gives up at the timeout when the copy does not follow, saying what it holds", func() {
		Expect(os.WriteFile(subnetFile, []byte(flanneldWrote), 0o644)).To(Succeed())
		write(status.Status{State: status.Ready, Reason: "flanneld wrote its subnet file"})
		var got result
		Eventually(waitInBackground(300 * time.Millisecond)).Should(Receive(&got))
		Expect(got.err).To(MatchError(MatchRegexp(`^flanneld wrote its subnet file, but after \d+s the copy that docker's job `+
			`and the CNI plugin read does not hold it \(is the job's subnet-publisher running\?\): open %s: no such file or directory$`, publishedFile)))
		Expect(os.WriteFile(publishedFile, []byte(strings.Replace(flanneldWrote, "198.18.3.1", "198.18.9.1", 1)), 0o644)).To(Succeed())
		Expect(os.Chmod(publishedFile, 0o644)).To(Succeed())
		Eventually(waitInBackground(300 * time.Millisecond)).Should(Receive(&got))
		Expect(got.err).To(MatchError(HaveSuffix(`: The published subnet file '` + publishedFile + `' holds FLANNEL_NETWORK=198.18.0.0/15 ` +
			`FLANNEL_SUBNET=198.18.9.1/24 FLANNEL_MTU=1450 FLANNEL_IPMASQ=true, flanneld wrote FLANNEL_NETWORK=198.18.0.0/15 ` +
			`FLANNEL_SUBNET=198.18.3.1/24 FLANNEL_MTU=1450 FLANNEL_IPMASQ=true`)))
	})

	It("fails at once when the run is ready and flanneld's subnet file is one that is not published", func() {
		Expect(os.WriteFile(subnetFile, []byte(strings.Replace(flanneldWrote, "1450", "$(id)", 1)), 0o644)).To(Succeed())
		write(status.Status{State: status.Ready})
		var got result
		Eventually(waitInBackground(10 * time.Second)).Should(Receive(&got))
		Expect(got.err).To(MatchError("flanneld wrote a subnet file that is not published: The subnet file '" + subnetFile +
			`' is not as flanneld writes it: FLANNEL_MTU must be a whole number from 576 to 65535, got "$(id)"`))
	})

	It("gives up at the timeout with where the run was and why", func() {
		write(status.Status{State: status.Retrying, Reason: "attempt 3: no etcd member answered at the addresses of 'etcd.cfcr.internal'"})
		var got result
		Eventually(waitInBackground(300 * time.Millisecond)).Should(Receive(&got))
		Expect(got.err).To(MatchError(MatchRegexp(`^still retrying after \d+s: attempt 3: no etcd member answered at the addresses of 'etcd.cfcr.internal'$`)))
	})

	It("gives up at the timeout saying that no status was written", func() {
		var got result
		Eventually(waitInBackground(300 * time.Millisecond)).Should(Receive(&got))
		Expect(got.err).To(MatchError(ContainSubstring("the launcher wrote no status to '" + statusFile + "'")))
		Expect(seen).NotTo(Receive())
	})

	It("gives up at the timeout when a named pipe sits at the status path, saying what is there", func() {
		Expect(syscall.Mkfifo(statusFile, 0o600)).To(Succeed())
		DeferCleanup(unblockReader, statusFile)
		var got result
		Eventually(waitInBackground(300 * time.Millisecond)).Should(Receive(&got))
		Expect(got.err).To(MatchError(MatchRegexp(`^No status after \d+s: .*'%s' is not a regular file but a named pipe`, statusFile)))
	})

	It("keeps waiting through a status file that is missing for a while, as between two runs", func() {
		write(status.Status{State: status.Retrying, Reason: "timeout"})
		done := waitInBackground(10 * time.Second)
		Eventually(seen).Should(Receive())
		Expect(os.Remove(statusFile)).To(Succeed())
		Consistently(done, 100*time.Millisecond).ShouldNot(Receive())
		writeSubnetFile()
		write(status.Status{State: status.Ready})
		var got result
		Eventually(done).Should(Receive(&got))
		Expect(got.err).NotTo(HaveOccurred())
	})
})

const flanneldWrote = "FLANNEL_NETWORK=198.18.0.0/15\nFLANNEL_SUBNET=198.18.3.1/24\nFLANNEL_MTU=1450\nFLANNEL_IPMASQ=true\n"
