package flanneld_test

import (
	"os"
	"path/filepath"
	"syscall"
	"time"

	boshlog "github.com/cloudfoundry/bosh-utils/logger"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/flanneld"
	"github.com/flannel-dns/flannel-dns/src/testenv/recordingflanneld/record"
	"github.com/flannel-dns/flannel-dns/src/testenv/testlog"
)

var _ = Describe("Runner", func() {
	var (
		recordFile string
		env        []string
		logger     boshlog.Logger
		logs       *gbytes.Buffer
		stop       chan os.Signal
		status     chan int
	)

	runner := func() flanneld.Runner {
		return flanneld.Runner{
			Starter:   flanneld.ExecStarter{Stdout: GinkgoWriter, Stderr: GinkgoWriter, Env: env},
			Logger:    logger,
			KillAfter: 300 * time.Millisecond,
		}
	}
	runInBackground := func() {
		go func() {
			defer GinkgoRecover()
			code, err := runner().Run(recordingFlanneld, []string{"-iface=lo", "-ip-masq"}, stop)
			Expect(err).NotTo(HaveOccurred())
			status <- code
		}()
	}
	recorded := func() record.Record {
		rec, err := record.Read(recordFile)
		Expect(err).NotTo(HaveOccurred())
		return rec
	}

	BeforeEach(func() {
		recordFile = filepath.Join(GinkgoT().TempDir(), "record.json")
		env = append(os.Environ(), record.FileEnv+"="+recordFile)
		logger, logs = testlog.New()
		stop = make(chan os.Signal, 1)
		status = make(chan int, 1)
	})

	It("runs flanneld with the arguments and returns its exit status", func() {
		env = append(env, record.ExitEnv+"=7")
		code, err := runner().Run(recordingFlanneld, []string{"-iface=lo", "-ip-masq"}, stop)
		Expect(err).NotTo(HaveOccurred())
		Expect(code).To(Equal(7))
		Expect(recorded().Args).To(Equal([]string{"-iface=lo", "-ip-masq"}))
		Expect(logs).To(gbytes.Say(`flanneld started: pid=\d+ path=\S+ args='-iface=lo -ip-masq'`))
		Expect(logs).To(gbytes.Say(`flanneld exited: pid=\d+ status=7`))
	})

	It("tells Started flanneld's PID", func() {
		env = append(env, record.ExitEnv+"=0")
		var startedPID int
		r := runner()
		r.Started = func(pid int) { startedPID = pid }
		_, err := r.Run(recordingFlanneld, nil, stop)
		Expect(err).NotTo(HaveOccurred())
		Expect(startedPID).To(Equal(recorded().PID))
	})

	It("forwards SIGTERM and returns the status flanneld exits with", func() {
		env = append(env, record.SignalExitEnv+"=3")
		runInBackground()
		Eventually(recordFile).Should(BeAnExistingFile())
		stop <- syscall.SIGTERM
		Eventually(status).Should(Receive(Equal(3)))
		Expect(recorded().Signals).To(Equal([]string{"terminated"}))
		Expect(logs).To(gbytes.Say(`forwarding signal: signal=terminated pid=\d+`))
	})

	It("tells Stopping the first stop signal, once", func() {
		env = append(env, record.IgnoreSignalEnv+"=true")
		var signals []os.Signal
		r := runner()
		r.Stopping = func(sig os.Signal) { signals = append(signals, sig) }
		go func() {
			code, _ := r.Run(recordingFlanneld, nil, stop)
			status <- code
		}()
		Eventually(recordFile).Should(BeAnExistingFile())
		stop <- syscall.SIGTERM
		stop <- syscall.SIGINT
		Eventually(status).Should(Receive())
		Expect(signals).To(Equal([]os.Signal{syscall.SIGTERM}))
	})

	It("forwards SIGINT", func() {
		runInBackground()
		Eventually(recordFile).Should(BeAnExistingFile())
		stop <- syscall.SIGINT
		Eventually(status).Should(Receive(Equal(0)))
		Expect(recorded().Signals).To(Equal([]string{"interrupt"}))
	})

	It("kills a flanneld that ignores the signal", func() {
		env = append(env, record.IgnoreSignalEnv+"=true")
		runInBackground()
		Eventually(recordFile).Should(BeAnExistingFile())
		stop <- syscall.SIGTERM
		Consistently(status, 200*time.Millisecond).ShouldNot(Receive())
		Eventually(status).Should(Receive(Equal(128 + int(syscall.SIGKILL))))
		Expect(recorded().Signals).To(Equal([]string{"terminated"}))
		Expect(logs).To(gbytes.Say(`flanneld still running, killing it: pid=\d+ waited=300ms`))
	})

	It("stops flanneld and starts it again with the arguments a restart brings", func() {
		restarts := make(chan []string, 1)
		started := make(chan int, 2)
		r := runner()
		r.Restarts, r.Started = restarts, func(pid int) { started <- pid }
		go func() {
			code, _ := r.Run(recordingFlanneld, []string{"-iface=lo"}, stop)
			status <- code
		}()
		var first int
		Eventually(started).Should(Receive(&first))
		Eventually(func() int { return recorded().PID }).Should(Equal(first))
		restarts <- []string{"-iface=eth9"}
		var second int
		Eventually(started).Should(Receive(&second))
		Expect(second).NotTo(Equal(first))
		Eventually(func() []string { return recorded().Args }).Should(Equal([]string{"-iface=eth9"}))
		Expect(logs).To(gbytes.Say(`restarting flanneld: pid=%d`, first))
		Expect(logs).To(gbytes.Say(`flanneld stopped for a restart: pid=%d`, first))
		Consistently(status, 200*time.Millisecond).ShouldNot(Receive())
		stop <- syscall.SIGTERM
		Eventually(status).Should(Receive(Equal(0)))
	})

	It("starts no flanneld again when a stop signal comes during a restart", func() {
		env = append(env, record.IgnoreSignalEnv+"=true")
		restarts := make(chan []string, 1)
		starts := 0
		r := runner()
		r.Restarts, r.Started = restarts, func(int) { starts++ }
		go func() {
			code, _ := r.Run(recordingFlanneld, nil, stop)
			status <- code
		}()
		Eventually(recordFile).Should(BeAnExistingFile())
		restarts <- []string{"-iface=eth9"}
		Eventually(logs).Should(gbytes.Say(`restarting flanneld`))
		stop <- syscall.SIGTERM
		Eventually(status).Should(Receive(Equal(128 + int(syscall.SIGKILL))))
		Expect(starts).To(Equal(1))
	})

	It("fails with the path when flanneld cannot be started", func() {
		missing := filepath.Join(GinkgoT().TempDir(), "no-flanneld")
		code, err := runner().Run(missing, nil, stop)
		Expect(code).To(Equal(1))
		Expect(err).To(MatchError(ContainSubstring("Starting flanneld '" + missing + "'")))
	})
})
