package procstats_test

import (
	"net"
	"os"
	"os/exec"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/flannel-dns/flannel-dns/src/e2e/procstats"
)

var _ = Describe("procstats", func() {
	It("reads when a process started and what it is", func() {
		before := time.Now()
		sleep := exec.Command("sleep", "30")
		Expect(sleep.Start()).To(Succeed())
		after := time.Now()
		DeferCleanup(func() { _ = sleep.Process.Kill(); _ = sleep.Wait() })

		start, err := procstats.Start(sleep.Process.Pid)
		Expect(err).NotTo(HaveOccurred())
		tick := 10 * time.Millisecond // the kernel's start time is in ticks
		Expect(start).To(BeTemporally(">=", before.Add(-tick)))
		Expect(start).To(BeTemporally("<=", after.Add(tick)))

		memory, err := procstats.ReadMemory(sleep.Process.Pid)
		Expect(err).NotTo(HaveOccurred())
		Expect(memory.Command).To(Equal("sleep"))
		Expect(memory.RSS).To(BeNumerically(">", 0))
		Expect(memory.Peak).To(BeNumerically(">=", memory.RSS))
		Expect(memory.Anon + memory.File).To(BeNumerically("<=", memory.RSS))
	})

	It("counts the CPU time a process used, as the kernel tells the process itself", func() {
		spin := time.Now()
		for time.Since(spin) < 100*time.Millisecond {
		}
		used, err := procstats.CPUTime(os.Getpid())
		Expect(err).NotTo(HaveOccurred())
		var usage syscall.Rusage
		Expect(syscall.Getrusage(syscall.RUSAGE_SELF, &usage)).To(Succeed())
		own := time.Duration(usage.Utime.Nano() + usage.Stime.Nano())

		Expect(own).To(BeNumerically(">", 0))
		Expect(used).To(BeNumerically("~", own, 50*time.Millisecond)) // /proc counts in 10 ms ticks
	})

	It("counts the time a process's threads ran to well below a tick", func() {
		spin := time.Now()
		for time.Since(spin) < 30*time.Millisecond {
		}
		var before, after syscall.Rusage
		Expect(syscall.Getrusage(syscall.RUSAGE_SELF, &before)).To(Succeed())
		onCPU, err := procstats.OnCPU(os.Getpid())
		Expect(err).NotTo(HaveOccurred())
		Expect(syscall.Getrusage(syscall.RUSAGE_SELF, &after)).To(Succeed())
		own := func(u syscall.Rusage) time.Duration { return time.Duration(u.Utime.Nano() + u.Stime.Nano()) }

		Expect(onCPU).To(BeNumerically(">=", 30*time.Millisecond))
		Expect(onCPU).To(BeNumerically(">=", own(before)-2*time.Millisecond), "threads that exited are not counted")
		Expect(onCPU).To(BeNumerically("<=", own(after)+2*time.Millisecond))
	})

	It("tells a running process from a dead one that is not reaped yet", func() {
		sleep := exec.Command("sleep", "30")
		Expect(sleep.Start()).To(Succeed())
		DeferCleanup(func() { _ = sleep.Process.Kill(); _ = sleep.Wait() })
		Expect(procstats.Running(sleep.Process.Pid)).To(BeTrue())
		Expect(sleep.Process.Signal(syscall.SIGKILL)).To(Succeed())
		Eventually(func() bool { return procstats.Running(sleep.Process.Pid) }).Should(BeFalse())
		Expect(syscall.Kill(sleep.Process.Pid, 0)).To(Succeed(), "not reaped yet: a zombie")
		Expect(sleep.Wait()).NotTo(Succeed())
		Expect(procstats.Running(sleep.Process.Pid)).To(BeFalse())
	})

	It("fails on a process that is not there", func() {
		_, err := procstats.Start(0)
		Expect(err).To(HaveOccurred())
		_, err = procstats.ReadMemory(1 << 30)
		Expect(err).To(MatchError(ContainSubstring("process 1073741824")))
	})

	It("counts only the connections to the port asked for", func() {
		listener, err := net.Listen("tcp", "127.0.0.1:0")
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(listener.Close)
		port := uint64(listener.Addr().(*net.TCPAddr).Port)
		before, err := procstats.ConnectionsTo(os.Getpid(), port)
		Expect(err).NotTo(HaveOccurred())

		for range 2 {
			conn, err := net.Dial("tcp", listener.Addr().String())
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(conn.Close)
		}

		for range 2 {
			accepted, err := listener.Accept()
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(accepted.Close)
		}

		// The accepted ends, in this process too, have the port as their local one: they do not count.
		Expect(procstats.ConnectionsTo(os.Getpid(), port)).To(Equal(before + 2))
	})

	It("reads the load average", func() {
		Expect(procstats.LoadAverage()).To(MatchRegexp(`^\d+\.\d\d \d+\.\d\d \d+\.\d\d$`))
	})
})
