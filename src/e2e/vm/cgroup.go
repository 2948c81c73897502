package vm

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
	"github.com/moby/sys/mountinfo"
)

// cgroup is a VM's cgroup: a directory named after the VM in the cgroup v2 hierarchy, which every command of
// the VM is cloned into, and the directories of the same name that runc adds under the v1 controllers.
type cgroup struct {
	name string
	dir  *os.File // in the v2 hierarchy, open for CLONE_INTO_CGROUP
}

func newCgroup(name string) (*cgroup, error) {
	mounts, err := cgroupMounts()
	if err != nil {
		return nil, err
	}
	unified := slices.IndexFunc(mounts, func(m cgroupMount) bool { return m.v2 })
	if unified < 0 {
		return nil, bosherr.Error("No cgroup v2 hierarchy is mounted: bpm names runc's cgroups after its v2 cgroup")
	}
	path := filepath.Join(mounts[unified].dir, name)
	if err := os.Mkdir(path, 0o755); err != nil && !os.IsExist(err) {
		return nil, bosherr.WrapErrorf(err, "Creating cgroup %s", path)
	}
	dir, err := os.Open(path)
	if err != nil {
		return nil, bosherr.WrapErrorf(err, "Opening cgroup %s", path)
	}
	return &cgroup{name: name, dir: dir}, nil
}

func (c *cgroup) fd() int { return int(c.dir.Fd()) }

// pids lists every process in the VM's cgroups, in any hierarchy.
func (c *cgroup) pids() []int {
	var pids []int
	c.walk(func(dir string) {
		data, _ := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
		for _, f := range strings.Fields(string(data)) {
			if pid, err := strconv.Atoi(f); err == nil {
				pids = append(pids, pid)
			}
		}
	})
	return pids
}

// removeChildren removes the (empty) cgroups below the VM's own, such as runc's for a container that died.
func (c *cgroup) removeChildren() error {
	var problems []string
	for _, top := range c.tops() {
		subs := c.below(top)
		for i := len(subs) - 1; i >= 0; i-- {
			if err := os.Remove(subs[i]); err != nil && !os.IsNotExist(err) {
				problems = append(problems, err.Error())
			}
		}
	}
	if len(problems) > 0 {
		return bosherr.Errorf("Removing cgroups of %s: %s", c.name, strings.Join(problems, "; "))
	}
	return nil
}

// remove removes every cgroup of the VM; its processes must be gone.
func (c *cgroup) remove() error {
	if err := c.removeChildren(); err != nil {
		return err
	}
	if c.dir != nil {
		_ = c.dir.Close()
	}
	for _, top := range c.tops() {
		if err := os.Remove(top); err != nil && !os.IsNotExist(err) {
			return bosherr.WrapErrorf(err, "Removing cgroup %s", top)
		}
	}
	return nil
}

// walk calls f on each of the VM's cgroup directories, parents first.
func (c *cgroup) walk(f func(dir string)) {
	for _, top := range c.tops() {
		f(top)
		for _, sub := range c.below(top) {
			f(sub)
		}
	}
}

// tops are the VM's cgroup directories that exist, one per hierarchy at most.
func (c *cgroup) tops() []string {
	mounts, _ := cgroupMounts()
	var tops []string
	for _, m := range mounts {
		if info, err := os.Stat(filepath.Join(m.dir, c.name)); err == nil && info.IsDir() {
			tops = append(tops, filepath.Join(m.dir, c.name))
		}
	}
	return tops
}

// below lists the cgroup directories under top, parents before their children.
func (c *cgroup) below(top string) []string {
	var dirs []string
	_ = filepath.WalkDir(top, func(path string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() && path != top {
			dirs = append(dirs, path)
		}
		return nil
	})
	return dirs
}

type cgroupMount struct {
	dir string
	v2  bool
}

// cgroupMounts lists the mounted cgroup hierarchies (v1 controllers and v2) from /proc/self/mountinfo.
func cgroupMounts() ([]cgroupMount, error) {
	infos, err := mountinfo.GetMounts(mountinfo.FSTypeFilter("cgroup", "cgroup2"))
	if err != nil {
		return nil, bosherr.WrapError(err, "Reading the mounts")
	}
	mounts := make([]cgroupMount, 0, len(infos))
	for _, m := range infos {
		mounts = append(mounts, cgroupMount{dir: m.Mountpoint, v2: m.FSType == "cgroup2"})
	}
	return mounts, nil
}
