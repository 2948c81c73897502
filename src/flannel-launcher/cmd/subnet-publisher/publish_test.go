package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	"github.com/onsi/gomega/gexec"
)

const flanneldWrote = "FLANNEL_NETWORK=198.18.0.0/15\nFLANNEL_SUBNET=198.18.3.1/24\nFLANNEL_MTU=1450\nFLANNEL_IPMASQ=true\n"

// dockerSources is what docker's job does with the file on start and on stop, as root (docker-boshrelease
// v32 to v35, jobs/docker/templates/bin/job_properties.sh.erb with flannel: true and bridge: cni0).
const dockerSources = `set -eu
source "$1"
echo "--mtu=${FLANNEL_MTU} --bridge-cidr=${FLANNEL_SUBNET}"
`

var _ = Describe("subnet-publisher", func() {
	var from, to, marker string

	start := func(args ...string) *gexec.Session {
		session, err := gexec.Start(exec.Command(binary, args...), GinkgoWriter, GinkgoWriter)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() {
			session.Terminate()
			Eventually(session).Should(gexec.Exit())
		})
		return session
	}
	flanneldWrites := func(content string) {
		tmp := from + ".tmp"
		Expect(os.WriteFile(tmp, []byte(content), 0o644)).To(Succeed())
		Expect(os.Rename(tmp, from)).To(Succeed())
	}
	published := func() string {
		data, _ := os.ReadFile(to)
		return string(data)
	}
	// sourced runs docker's lines on the published file as root and returns what they print.
	sourced := func() string {
		out, err := exec.Command("bash", "-c", dockerSources, "docker-ctl", to).CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), string(out))
		return string(out)
	}

	BeforeEach(func() {
		Expect(os.Getuid()).To(BeZero(), "the tests run as root, as CI runs them")
		dir := GinkgoT().TempDir()
		Expect(os.Mkdir(filepath.Join(dir, "flanneld"), 0o750)).To(Succeed())
		from = filepath.Join(dir, "flanneld", "subnet.env")
		to = filepath.Join(dir, "flannel", "subnet.env")
		marker = filepath.Join(dir, "owned")
	})

	It("publishes what flanneld writes, for docker's job to source, until a stop signal, and leaves the copy", func() {
		session := start("--from", from, "--to", to)
		Eventually(session.Err).Should(gbytes.Say(`INFO - starting: version=dev from=` + from + ` to=` + to + ` keep= status=\n`))
		flanneldWrites(flanneldWrote)
		Eventually(published).Should(Equal(flanneldWrote))
		Expect(sourced()).To(Equal("--mtu=1450 --bridge-cidr=198.18.3.1/24\n"))
		session.Terminate()
		Eventually(session).Should(gexec.Exit(0))
		Expect(session.Err).To(gbytes.Say(`stopping: '` + to + `' stays`))
		Expect(published()).To(Equal(flanneldWrote))
	})

	It("never lets what flanneld's user writes run as root when docker's job sources the copy", func() {
		session := start("--from", from, "--to", to)
		flanneldWrites(flanneldWrote)
		Eventually(published).Should(Equal(flanneldWrote))
		for _, attack := range []string{
			strings.Replace(flanneldWrote, "1450", "1450$(touch "+marker+")", 1),
			strings.Replace(flanneldWrote, "1450", "`touch "+marker+"`", 1),
			strings.Replace(flanneldWrote, "true", "true; touch "+marker, 1),
			flanneldWrote + "touch " + marker + "\n",
		} {
			flanneldWrites(attack)
			Consistently(func() string {
				Expect(sourced()).To(Equal("--mtu=1450 --bridge-cidr=198.18.3.1/24\n"))
				return marker
			}, 600*time.Millisecond).ShouldNot(BeAnExistingFile())
			Expect(published()).To(Equal(flanneldWrote))
			Eventually(session.Err).Should(gbytes.Say(`ERROR - Not publishing flanneld's subnet file, '` + to + `' stays as it is: `))
		}
		flanneldWrites(strings.Replace(flanneldWrote, "198.18.3.1", "198.18.9.1", 1))
		Eventually(sourced).Should(Equal("--mtu=1450 --bridge-cidr=198.18.9.1/24\n"))
	})

	It("keeps a copy that restore puts back where a reboot emptied /run, for docker's first start", func() {
		keep := filepath.Join(filepath.Dir(marker), "data", "subnet.env")
		session := start("--from", from, "--to", to, "--keep", keep)
		flanneldWrites(flanneldWrote)
		Eventually(func() ([]byte, error) { return os.ReadFile(keep) }).Should(BeEquivalentTo(flanneldWrote))
		session.Terminate()
		Eventually(session).Should(gexec.Exit(0))
		Expect(os.RemoveAll(filepath.Dir(to))).To(Succeed())

		restore := start("restore", "--keep", keep, "--to", to)
		Eventually(restore).Should(gexec.Exit(0))
		Expect(restore.Err).To(gbytes.Say(`INFO - Restored '` + to + `' from the kept copy '` + keep + `'`))
		Expect(sourced()).To(Equal("--mtu=1450 --bridge-cidr=198.18.3.1/24\n"))

		Expect(os.Remove(to)).To(Succeed())
		old := time.Now().Add(-2 * time.Hour)
		Expect(os.Chtimes(keep, old, old)).To(Succeed())
		stale := start("restore", "--keep", keep, "--to", to)
		Eventually(stale).Should(gexec.Exit(1))
		Expect(stale.Err).To(gbytes.Say(`ERROR - Not restoring '` + to + `': The kept subnet file '` + keep + `' was last current 2h0m0s ago`))
		Expect(to).NotTo(BeAnExistingFile())
	})

	It("keeps a copy of an old flanneld file only while the launcher's status file reports flanneld ready", func() {
		dir := filepath.Dir(marker)
		keep, statusFile := filepath.Join(dir, "data", "subnet.env"), filepath.Join(dir, "status.json")
		flanneldWrites(flanneldWrote)
		old := time.Now().Add(-2 * time.Hour)
		Expect(os.Chtimes(from, old, old)).To(Succeed()) // written by a flanneld that has crashed since

		Expect(os.WriteFile(statusFile, []byte(`{"state": "failed", "reason": "flanneld exited with status 1"}`), 0o600)).To(Succeed())
		session := start("--from", from, "--to", to, "--keep", keep, "--status", statusFile)
		Eventually(session.Err).Should(gbytes.Say(`status=` + statusFile + `\n`))
		Eventually(published).Should(Equal(flanneldWrote))
		Expect(keep).NotTo(BeAnExistingFile())
		session.Terminate()
		Eventually(session).Should(gexec.Exit(0))

		Expect(os.WriteFile(statusFile, []byte(`{"state": "ready", "flanneld_pid": 7}`), 0o600)).To(Succeed())
		start("--from", from, "--to", to, "--keep", keep, "--status", statusFile)
		Eventually(func() ([]byte, error) { return os.ReadFile(keep) }).Should(BeEquivalentTo(flanneldWrote))
	})

	DescribeTable("exits 2 on a usage error, before it touches anything",
		func(message string, args ...string) {
			session := start(args...)
			Eventually(session).Should(gexec.Exit(2))
			Expect(session.Err).To(gbytes.Say(message))
			Expect(filepath.Dir(to)).NotTo(BeADirectory())
		},
		Entry("no --to", `subnet-publisher: --from and --to are required`, "--from", "/var/x/subnet.env"),
		Entry("an unknown flag", `subnet-publisher: flag provided but not defined: -into`, "--into", "/x"),
		Entry("a stray argument", `subnet-publisher: unexpected argument 'now'`, "--from", "/a/x", "--to", "/b/x", "now"),
		Entry("restore without --keep", `subnet-publisher restore: --keep and --to are required`, "restore", "--to", "/b/x"),
		Entry("restore with a relative path", `subnet-publisher restore: 'x/y' is not a clean absolute path to a file`, "restore", "--keep", "x/y", "--to", "/b/x"),
		Entry("both files in one directory", `subnet-publisher: '/run/flannel/a.env' and '/run/flannel/b.env' are in the same directory`,
			"--from", "/run/flannel/a.env", "--to", "/run/flannel/b.env"),
	)

	It("exits 2 when it does not run as root", func() {
		// gexec builds into a directory that root alone may enter
		dir := GinkgoT().TempDir()
		Expect(os.Chmod(dir, 0o755)).To(Succeed())
		data, err := os.ReadFile(binary)
		Expect(err).NotTo(HaveOccurred())
		Expect(os.WriteFile(filepath.Join(dir, "subnet-publisher"), data, 0o755)).To(Succeed())
		cmd := exec.Command(filepath.Join(dir, "subnet-publisher"), "--from", from, "--to", to)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		session, err := gexec.Start(cmd, GinkgoWriter, GinkgoWriter)
		Expect(err).NotTo(HaveOccurred())
		Eventually(session).Should(gexec.Exit(2))
		Expect(filepath.Dir(to)).NotTo(BeADirectory())
		Expect(session.Err).To(gbytes.Say(`subnet-publisher: must run as root: the copy it writes must be root's alone`))
	})
})
