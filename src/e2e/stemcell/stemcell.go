// Package stemcell is what a simulated VM takes from the BOSH stemcell line it stands for: what the bosh-agent
// that the line ships makes under /var/vcap at boot (../shared/thirdparty/bosh-agent-<version>-platform.tgz).
package stemcell

import bosherr "github.com/cloudfoundry/bosh-utils/errors"

// Stemcell is one stemcell line as a simulated VM reproduces it.
type Stemcell struct {
	Name string // the line, as the stemcell builder's branch names it
	// AgentPlatform is the agent version whose platform code the VM's /var/vcap follows (the nearest one in
	// ../shared/thirdparty to the agent the line ships); RunTmpfsSize is the size= its setupRunDir mounts
	// /var/vcap/data/sys/run with, the only option it gives, so the tmpfs has mode 1777.
	AgentPlatform, RunTmpfsSize string
	// SensitiveBlobs and DynamicDisks: the agent makes /var/vcap/data/sensitive_blobs (from v2.212.0) and
	// /var/vcap/data/dynamic_disks (by v2.874.0), root:vcap 0700.
	SensitiveBlobs, DynamicDisks bool
}

// Lines are the stemcell lines the lanes run: the v0.21 seed deployment's xenial 97.x (agent 2.117.16,
// platform code of v2.135.0 here), xenial 315.x (agent 2.215.10, v2.212.0) and jammy (agent 2.695.0,
// v2.874.0). 2018's agent mounts a 1 MiB tmpfs, later ones 16 MiB.
var Lines = map[string]Stemcell{
	"ubuntu-xenial-97.x":  {Name: "ubuntu-xenial/97.x", AgentPlatform: "v2.135.0", RunTmpfsSize: "1m"},
	"ubuntu-xenial-315.x": {Name: "ubuntu-xenial/315.x", AgentPlatform: "v2.212.0", RunTmpfsSize: "1m", SensitiveBlobs: true},
	"ubuntu-jammy": {Name: "ubuntu-jammy", AgentPlatform: "v2.874.0", RunTmpfsSize: "16m",
		SensitiveBlobs: true, DynamicDisks: true},
}

// Line is the stemcell line named name.
func Line(name string) (Stemcell, error) {
	s, ok := Lines[name]
	if !ok {
		return Stemcell{}, bosherr.Errorf("No stemcell line '%s'", name)
	}
	return s, nil
}
