package agent

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"

	"github.com/flannel-dns/flannel-dns/src/e2e/monit"
	"github.com/flannel-dns/flannel-dns/src/jobrender"
)

// Apply lays jobs out as the agent does on apply: monit's job files go, each job's files under
// /var/vcap/data/jobs/<job>/<hash> (group vcap, so that the job's user can read them), linked from
// /var/vcap/jobs/<job>; each package under /var/vcap/data/packages/<name>/<hash>, linked from
// /var/vcap/packages/<name> and from the job's packages/<name>. Jobs that are no longer sent are unlinked. Of a
// job sent RenderedOnly, only the packages the agent has. Then monit reloads (it has no job to watch until the
// start configures them). Nothing is started.
func (a *Agent) Apply(jobs []Job) error {
	var next []installed
	if err := a.clearLinks("/var/vcap/jobs", monitJobDir); err != nil {
		return err
	}
	for _, job := range jobs {
		if job.RenderedOnly {
			if err := a.installPackages(job); err != nil {
				return err
			}
			continue
		}
		procs, err := monit.Parse(job.Files[jobrender.MonitPath])
		if err != nil {
			return bosherr.WrapErrorf(err, "Reading the monit file of job %s", job.Name)
		}
		if err := a.installJob(job); err != nil {
			return err
		}
		if err := a.installPackages(job); err != nil {
			return err
		}
		next = append(next, installed{Job: job, procs: procs})
	}
	a.mu.Lock()
	a.jobs = next
	a.mu.Unlock()
	return a.reload()
}

// jobDir is where the agent lays job out, which /var/vcap/jobs/<job> links to.
func jobDir(job Job) string {
	return fmt.Sprintf("/var/vcap/data/jobs/%s/%s", job.Name, filesHash(job.Files))
}

func (a *Agent) installJob(job Job) error {
	dir := jobDir(job)
	if err := (jobrender.Rendered{Files: job.Files}).WriteTo(a.VM.Path(dir)); err != nil {
		return bosherr.WrapErrorf(err, "Writing job %s on %s", job.Name, a.VM.Name)
	}
	if out, err := exec.Command("chown", "-R", "root:vcap", a.VM.Path(filepath.Dir(dir))).CombinedOutput(); err != nil {
		return bosherr.WrapErrorf(err, "Giving job %s on %s to group vcap: %s", job.Name, a.VM.Name, strings.TrimSpace(string(out)))
	}
	return a.link(dir, "/var/vcap/jobs/"+job.Name)
}

// installPackages installs the packages job names and links each from the job's packages/<name>, as the agent
// links a job's packages (kubelet's --cni-bin-dir is /var/vcap/jobs/kubelet/packages/cni/bin). A job sent
// RenderedOnly gets the packages the agent has, and a directory of its own only when it gets one.
func (a *Agent) installPackages(job Job) error {
	dir := jobDir(job)
	linked := false
	for _, name := range job.Packages {
		src, ok := job.PackageDirs[name]
		if !ok {
			src, ok = a.Packages[name]
		}
		if !ok && job.RenderedOnly {
			continue
		}
		if !ok {
			return bosherr.Errorf("No compiled package '%s' for %s", name, a.VM.Name)
		}
		pkg, err := a.installPackage(name, src)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(a.VM.Path(dir+"/packages"), 0o755); err != nil {
			return bosherr.WrapErrorf(err, "Creating the packages directory of job %s on %s", job.Name, a.VM.Name)
		}
		if err := a.link(pkg, dir+"/packages/"+name); err != nil {
			return err
		}
		linked = true
	}
	if job.RenderedOnly && linked {
		return a.link(dir, "/var/vcap/jobs/"+job.Name)
	}
	return nil
}

// configureJobs gives monit every job's monit file, as the agent does before a start: the last job as
// /var/vcap/monit/job/0000_<job>.monitrc, the first with the highest number (monit lists a group's services
// in the reverse order of its files, so the agent starts them in job order); then monit reloads.
func (a *Agent) configureJobs() error {
	a.mu.Lock()
	jobs := append([]installed(nil), a.jobs...)
	a.mu.Unlock()
	for i := range jobs {
		job := jobs[len(jobs)-1-i]
		path := fmt.Sprintf("%s/%04d_%s.monitrc", monitJobDir, i, job.Name)
		if err := os.WriteFile(a.VM.Path(path), withShim(job.Files[jobrender.MonitPath], a.VM.BashEnv()), 0o600); err != nil {
			return bosherr.WrapErrorf(err, "Writing %s", path)
		}
	}
	return a.reload()
}

// program is where a monit file names a start or stop program.
var program = regexp.MustCompile(`((?:start|stop)\s+program\s*=?\s*")`)

// withShim has every start and stop program of a monit file read the VM's ulimit shim (vm.VM.BashEnv): monit
// empties the environment of what it runs, and bash reads the shim from BASH_ENV only.
func withShim(monitFile []byte, shim string) []byte {
	return program.ReplaceAll(monitFile, []byte("${1}/usr/bin/env BASH_ENV="+shim+" "))
}

// installPackage copies the compiled package name from src onto the VM as hard links (cheap, and real files,
// which bpm's mounts need: a link out of /var/vcap would dangle inside a container), and returns where it lies.
func (a *Agent) installPackage(name, src string) (string, error) {
	src, err := filepath.EvalSymlinks(src)
	if err != nil {
		return "", bosherr.WrapErrorf(err, "Finding compiled package %s", name)
	}
	sum := sha256.Sum256([]byte(src))
	dir := fmt.Sprintf("/var/vcap/data/packages/%s/%s", name, hex.EncodeToString(sum[:8]))
	if _, err := os.Stat(a.VM.Path(dir)); os.IsNotExist(err) {
		if err := copyTree(src, a.VM.Path(dir)); err != nil {
			return "", bosherr.WrapErrorf(err, "Installing package %s on %s", name, a.VM.Name)
		}
	}
	return dir, a.link(dir, "/var/vcap/packages/"+name)
}

func copyTree(src, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	out, err := exec.Command("cp", "-al", src, dst).CombinedOutput()
	if err != nil { // another file system: a plain copy
		_ = os.RemoveAll(dst)
		out, err = exec.Command("cp", "-a", src, dst).CombinedOutput()
	}
	if err != nil {
		return bosherr.WrapErrorf(err, "cp %s %s: %s", src, dst, strings.TrimSpace(string(out)))
	}
	return nil
}

// link points the VM's path at target (both as on the VM), replacing what was there. The link is relative
// (the agent's are absolute), so that it resolves from the host too.
func (a *Agent) link(target, path string) error {
	tmp := a.VM.Path(path + ".new")
	_ = os.Remove(tmp)
	rel, err := filepath.Rel(filepath.Dir(path), target)
	if err != nil {
		return bosherr.WrapErrorf(err, "Linking %s on %s", path, a.VM.Name)
	}
	if err := os.Symlink(rel, tmp); err != nil {
		return bosherr.WrapErrorf(err, "Linking %s on %s", path, a.VM.Name)
	}
	if err := os.Rename(tmp, a.VM.Path(path)); err != nil {
		return bosherr.WrapErrorf(err, "Linking %s on %s", path, a.VM.Name)
	}
	return nil
}

// clearLinks removes the agent's links (and monit files) of the jobs applied before.
func (a *Agent) clearLinks(dirs ...string) error {
	for _, dir := range dirs {
		entries, err := os.ReadDir(a.VM.Path(dir))
		if err != nil {
			return bosherr.WrapErrorf(err, "Reading %s on %s", dir, a.VM.Name)
		}
		for _, e := range entries {
			if e.Type()&os.ModeSymlink == 0 && !strings.HasSuffix(e.Name(), ".monitrc") {
				continue // not the agent's
			}
			if err := os.Remove(filepath.Join(a.VM.Path(dir), e.Name())); err != nil {
				return bosherr.WrapErrorf(err, "Removing %s/%s on %s", dir, e.Name(), a.VM.Name)
			}
		}
	}
	return nil
}

func filesHash(files map[string][]byte) string {
	h := sha256.New()
	for _, path := range (jobrender.Rendered{Files: files}).Paths() {
		h.Write([]byte(path + "\x00"))
		h.Write(files[path])
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}
