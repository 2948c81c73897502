// Package stemcell is what a simulated VM takes from the BOSH stemcell line it stands for: what the bosh-agent
// that the line ships makes under /var/vcap at boot (../shared/thirdparty/bosh-agent-<version>-platform.tgz),
// the kernel its builder installs and the sysctls it ships (../shared/thirdparty/stemcell-<line>.tgz).
package stemcell

import bosherr "github.com/cloudfoundry/bosh-utils/errors"

// Stemcell is one stemcell line as a simulated VM reproduces it: RunTmpfsSize is the size= its agent's
// setupRunDir mounts /var/vcap/data/sys/run with, the only option it gives, so the tmpfs has mode 1777;
// SensitiveBlobs and DynamicDisks say whether the agent makes /var/vcap/data/sensitive_blobs (from v2.212.0)
// and /var/vcap/data/dynamic_disks (by v2.874.0), root:vcap 0700. Kernel is the version of the kernel that the
// builder's system_kernel stage installs. Sysctls are the settings of the files its bosh_sysctl stage installs
// (Load reads them).
type Stemcell struct {
	Name                         string
	RunTmpfsSize                 string
	SensitiveBlobs, DynamicDisks bool
	Kernel                       Kernel
	Sysctls                      []Sysctl
}

// Lines are the stemcell lines the lanes run, each as the nearest agent platform code in ../shared/thirdparty
// makes it: the v0.21 seed deployment's xenial 97.x (agent 2.117.16; v2.135.0's code), xenial 315.x (agent
// 2.215.10; v2.212.0) and jammy (agent 2.695.0; v2.874.0). v2.135.0 and v2.212.0 mount a 1 MiB tmpfs, v2.874.0 16 MiB.
// Both xenial lines install linux-generic-hwe-16.04, whose last kernel is 4.15; jammy installs linux-generic, 5.15.
var Lines = map[string]Stemcell{
	"ubuntu-xenial-97.x":  {Name: "ubuntu-xenial-97.x", RunTmpfsSize: "1m", Kernel: Kernel{4, 15}},
	"ubuntu-xenial-315.x": {Name: "ubuntu-xenial-315.x", RunTmpfsSize: "1m", SensitiveBlobs: true, Kernel: Kernel{4, 15}},
	"ubuntu-jammy":        {Name: "ubuntu-jammy", RunTmpfsSize: "16m", SensitiveBlobs: true, DynamicDisks: true, Kernel: Kernel{5, 15}},
}

// Line is the stemcell line named name, without its sysctls.
func Line(name string) (Stemcell, error) {
	s, ok := Lines[name]
	if !ok {
		return Stemcell{}, bosherr.Errorf("No stemcell line '%s'", name)
	}
	return s, nil
}

// Load is the stemcell line named name with the sysctls of its builder, unpacked under cache
// (scripts/unpack-stemcells).
func Load(cache, name string) (Stemcell, error) {
	s, err := Line(name)
	if err != nil {
		return Stemcell{}, err
	}
	s.Sysctls, err = readSysctls(cache, name)
	return s, err
}
