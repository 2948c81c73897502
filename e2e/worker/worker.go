// Package worker runs this release's jobs on a simulated worker VM the way BOSH does: compiled packages
// under /var/vcap/packages, rendered templates under /var/vcap/jobs/<job>, pre-start, then the bpm
// process started with the executable, args and env that bpm.yml names.
package worker

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
	"go.yaml.in/yaml/v3"

	"github.com/flannel-dns/flannel-dns/e2e/director"
	"github.com/flannel-dns/flannel-dns/e2e/network"
	"github.com/flannel-dns/flannel-dns/e2e/vm"
	"github.com/flannel-dns/flannel-dns/jobrender"
)

// Worker is a VM with this release's jobs on it.
type Worker struct {
	*vm.VM
	Index int
	// ConfineWith, when set, is the path of a bpmseccomp binary (src/flannel-launcher/cmd/flannel-launcher/
	// testdata/bpmseccomp), and the bpm processes started from then on are confined as far as bpm confines a
	// job that is not privileged: under a seccomp filter that refuses pidfd_open and pidfd_getfd, as user
	// vcap, with only the capabilities that bpm.yml lists (ambient, inheritable and bounding set).
	// Empty: they run as root, unconfined.
	ConfineWith string
	jobs        []string
}

type bpmConfig struct {
	Processes []struct {
		Name         string            `yaml:"name"`
		Executable   string            `yaml:"executable"`
		Args         []string          `yaml:"args"`
		Env          map[string]string `yaml:"env"`
		Capabilities []string          `yaml:"capabilities"`
	} `yaml:"processes"`
}

// jobUser is who bpm runs a job's processes as when the job is not privileged.
const jobUser = "vcap"

// Install links each compiled package (a directory under packagesDir) into /var/vcap/packages and
// writes every rendered job under /var/vcap/jobs, as the agent does.
func (w *Worker) Install(packagesDir string, jobs map[string]director.Files) error {
	if err := w.linkPackages(packagesDir); err != nil {
		return err
	}
	w.jobs = w.jobs[:0]
	for job, files := range jobs {
		w.jobs = append(w.jobs, job)
		rendered := jobrender.Rendered{Files: files}
		if err := rendered.WriteTo(w.Path(filepath.Join("/var/vcap/jobs", job))); err != nil {
			return bosherr.WrapErrorf(err, "Installing job %s on %s", job, w.Name)
		}
	}
	return nil
}

func (w *Worker) linkPackages(packagesDir string) error {
	entries, err := os.ReadDir(packagesDir)
	if err != nil {
		return bosherr.WrapErrorf(err, "Reading compiled packages at %s", packagesDir)
	}
	dir := w.Path("/var/vcap/packages")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return bosherr.WrapError(err, "Creating /var/vcap/packages")
	}
	for _, e := range entries {
		link := filepath.Join(dir, e.Name())
		_ = os.Remove(link)
		if err := os.Symlink(filepath.Join(packagesDir, e.Name()), link); err != nil {
			return bosherr.WrapErrorf(err, "Linking package %s", e.Name())
		}
	}
	return nil
}

// Start runs each job's pre-start (if it has one), then starts its bpm processes.
func (w *Worker) Start() error {
	for _, job := range w.jobs {
		if err := w.preStart(job); err != nil {
			return err
		}
		if err := w.startBPM(job); err != nil {
			return err
		}
	}
	return nil
}

// Restart stops every process and starts them again: what an update does to an instance.
func (w *Worker) Restart() error {
	w.StopAll(10 * time.Second)
	return w.Start()
}

func (w *Worker) preStart(job string) error {
	script := "/var/vcap/jobs/" + job + "/bin/pre-start"
	if _, err := os.Stat(w.Path(script)); os.IsNotExist(err) {
		return nil
	}
	_, err := w.Run(script)
	return err
}

func (w *Worker) startBPM(job string) error {
	path := w.Path("/var/vcap/jobs/" + job + "/config/bpm.yml")
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return bosherr.WrapErrorf(err, "Reading bpm.yml of %s", job)
	}
	var cfg bpmConfig
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		return bosherr.WrapErrorf(err, "Parsing bpm.yml of %s", job)
	}
	for _, p := range cfg.Processes {
		var env []string
		for k, v := range p.Env {
			env = append(env, k+"="+v)
		}
		args := append([]string{p.Executable}, p.Args...)
		if w.ConfineWith != "" {
			if err := w.shareJobWithVcap(job); err != nil {
				return err
			}
			args = append(w.confinement(p.Capabilities), args...)
		}
		if err := w.VM.Start(p.Name, env, args...); err != nil {
			return err
		}
	}
	return nil
}

// confinement is the command prefix that starts a process as bpm starts one of a job that is not privileged:
// bpmseccomp installs its filter as root (it runs after the VM's bind mounts), then setpriv becomes vcap
// with caps (bpm.yml's names, such as NET_ADMIN) and nothing more; both exec, so the process keeps its PID.
func (w *Worker) confinement(caps []string) []string {
	set := "-all"
	for _, c := range caps {
		set += ",+" + strings.ToLower(c)
	}
	return []string{w.ConfineWith, "setpriv", "--reuid", jobUser, "--regid", jobUser, "--init-groups",
		"--inh-caps", set, "--ambient-caps", set, "--bounding-set", set, "--"}
}

// shareJobWithVcap gives group vcap the job's rendered files (mode 0640, directories 0750), as the agent
// does on a stemcell, so that the job's user can read its config and keys.
func (w *Worker) shareJobWithVcap(job string) error {
	for _, args := range [][]string{{"chgrp", jobUser, w.Path("/var/vcap/jobs")}, {"chgrp", "-R", jobUser, w.Path("/var/vcap/jobs/" + job)}} {
		if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			return bosherr.WrapErrorf(err, "Giving %s's files on %s to group %s: %s", job, w.Name, jobUser, strings.TrimSpace(string(out)))
		}
	}
	return nil
}

// ChildPID is the PID of the first child of the process started as name (flanneld under the launcher), 0 if none.
// The kernel lists children under the thread that forked them, so every thread of the parent is read.
func (w *Worker) ChildPID(name string) int {
	parent := w.PID(name)
	if parent == 0 {
		return 0
	}
	lists, _ := filepath.Glob("/proc/" + strconv.Itoa(parent) + "/task/*/children")
	for _, list := range lists {
		data, err := os.ReadFile(list)
		if err != nil {
			continue
		}
		if fields := strings.Fields(string(data)); len(fields) > 0 {
			pid, _ := strconv.Atoi(fields[0])
			return pid
		}
	}
	return 0
}

// SubnetEnv reads flanneld's subnet file (path as on the VM).
func (w *Worker) SubnetEnv(path string) (map[string]string, error) {
	f, err := os.Open(w.Path(path))
	if err != nil {
		return nil, bosherr.WrapErrorf(err, "Reading %s on %s", path, w.Name)
	}
	defer f.Close()
	env := map[string]string{}
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		if k, v, ok := strings.Cut(scanner.Text(), "="); ok {
			env[k] = v
		}
	}
	return env, scanner.Err()
}

// PowerOff is what a power cut and the boot after it take from the VM: every process in its namespace is
// killed with SIGKILL (no clean-up runs), /run/flannel is emptied (tmpfs), the interfaces that flanneld or
// the CNI plugin created are gone (every one but lo, eth0, the VM's NIC, and keep), the packet filter
// rules are gone and IP forwarding is back at the kernel's default. Start boots it again.
func (w *Worker) PowerOff(keep ...string) error {
	if err := w.killAll(); err != nil {
		return err
	}
	if err := emptyDir(w.Path("/run/flannel")); err != nil {
		return err
	}
	if err := w.deleteLinks(append([]string{"lo", "eth0"}, keep...)); err != nil {
		return err
	}
	for _, args := range [][]string{{"nft", "flush", "ruleset"}, {"sysctl", "-qw", "net.ipv4.ip_forward=0"}} {
		if _, err := w.Run(args...); err != nil {
			return err
		}
	}
	return nil
}

func (w *Worker) killAll() error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		pids := network.PIDsIn(w.Namespace)
		if len(pids) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return bosherr.Errorf("Processes %v on %s did not die", pids, w.Name)
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func emptyDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return bosherr.WrapErrorf(err, "Reading %s", dir)
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return bosherr.WrapErrorf(err, "Emptying %s", dir)
		}
	}
	return nil
}

func (w *Worker) deleteLinks(keep []string) error {
	out, err := exec.Command("ip", "-n", w.Namespace, "-j", "link", "show").Output()
	if err != nil {
		return bosherr.WrapErrorf(err, "Listing interfaces on %s", w.Name)
	}
	var links []struct {
		Name string `json:"ifname"`
	}
	if err := json.Unmarshal(out, &links); err != nil {
		return bosherr.WrapErrorf(err, "Parsing interfaces of %s", w.Name)
	}
	for _, l := range links {
		if slices.Contains(keep, l.Name) {
			continue
		}
		if out, err := exec.Command("ip", "-n", w.Namespace, "link", "del", l.Name).CombinedOutput(); err != nil {
			return bosherr.WrapErrorf(err, "Deleting %s on %s: %s", l.Name, w.Name, strings.TrimSpace(string(out)))
		}
	}
	return nil
}
