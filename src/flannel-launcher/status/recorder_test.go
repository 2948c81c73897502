package status_test

import (
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/status"
	"github.com/flannel-dns/flannel-dns/src/testenv/testlog"
)

var _ = Describe("Recorder", func() {
	var (
		path  string
		clock time.Time
		now   = func() time.Time { return clock }
	)

	read := func() status.Status {
		s, err := status.Read(path)
		Expect(err).NotTo(HaveOccurred())
		return s
	}

	BeforeEach(func() {
		path = filepath.Join(GinkgoT().TempDir(), "status.json")
		clock = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	})

	It("writes 'starting' at once, replacing what an earlier run left", func() {
		Expect(status.Write(path, status.Status{State: status.Ready, FlanneldPID: 7, Started: clock.Add(-time.Hour)})).To(Succeed())
		logger, _ := testlog.New()
		status.NewRecorder(path, logger, now)
		Expect(read()).To(Equal(status.Status{State: status.Starting, Started: clock, Updated: clock}))
	})

	It("keeps each step's state and reason, flanneld's PID once it runs, and the run's start", func() {
		logger, _ := testlog.New()
		started := clock
		recorder := status.NewRecorder(path, logger, now)

		clock = clock.Add(time.Second)
		recorder.Retrying("no etcd member answered")
		Expect(read()).To(Equal(status.Status{State: status.Retrying, Reason: "no etcd member answered", Started: started, Updated: clock}))

		recorder.FlanneldStarted(42, "waiting for the subnet file")
		Expect(read()).To(Equal(status.Status{State: status.Starting, Reason: "waiting for the subnet file", FlanneldPID: 42, Started: started, Updated: clock}))

		clock = clock.Add(time.Second)
		recorder.Waiting("waiting for the copy")
		Expect(read()).To(Equal(status.Status{State: status.Starting, Reason: "waiting for the copy", FlanneldPID: 42, Started: started, Updated: clock}))

		recorder.Ready("wrote it")
		Expect(read().State).To(Equal(status.Ready))
		Expect(read().FlanneldPID).To(Equal(42))
		Expect(recorder.Current()).To(Equal(read()))
	})

	It("keeps why the run ended: nothing after failed or stopped changes the file", func() {
		logger, _ := testlog.New()
		recorder := status.NewRecorder(path, logger, now)
		recorder.Failed("giving up on checking etcd's server certificate")
		recorder.Ready("late")
		recorder.Stopped("late too")
		Expect(read().State).To(Equal(status.Failed))
		Expect(read().Reason).To(Equal("giving up on checking etcd's server certificate"))

		stopped := status.NewRecorder(path, logger, now)
		stopped.Stopped("stop signal")
		stopped.Failed("flanneld exited with status 0")
		Expect(read().State).To(Equal(status.Stopped))
	})

	It("logs a status it cannot write and goes on", func() {
		logger, logs := testlog.New()
		path = filepath.Join(GinkgoT().TempDir(), "missing", "status.json")
		recorder := status.NewRecorder(path, logger, now)
		recorder.Retrying("timeout")
		Expect(logs).To(gbytes.Say(`ERROR - Writing the status file '` + path + `'.*\(state retrying: timeout\)`))
		Expect(recorder.Current().State).To(Equal(status.Retrying))
	})

	It("writes nothing without a path", func() {
		logger, _ := testlog.New()
		dir := GinkgoT().TempDir()
		// a relative path would land in the working directory
		previous, err := os.Getwd()
		Expect(err).NotTo(HaveOccurred())
		Expect(os.Chdir(dir)).To(Succeed())
		DeferCleanup(os.Chdir, previous)
		recorder := status.NewRecorder("", logger, now)
		recorder.Ready("ready")
		Expect(recorder.Current().State).To(Equal(status.Ready))
		Expect(os.ReadDir(dir)).To(BeEmpty())
	})
})
