// bpm-check reads a job's rendered bpm.yml as bpm 1.4.38 does when monit runs `bpm start JOB`, and fails where
// bpm would, or where bpm's lenient parser would let a mistake through:
//
//	bpm-check JOB BPM_YML
//
// It is built against bpm's own packages by scripts/build-bpm-check (the file is laid over bpm's unpacked
// source, not part of this repository's modules). Checks, in order: bpm's parser (config.ParseJobConfig); the
// same YAML decoded strictly into bpm's types, so an unknown key (a typo bpm would drop) fails; bpm's
// validation with the default volumes of JOB; a process named JOB (what `bpm start JOB` runs); the runc spec bpm
// builds for it. On success it prints, as JSON, bpm's view of the process and the capabilities of the spec.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"

	"code.cloudfoundry.org/lager/v3"
	specs "github.com/opencontainers/runtime-spec/specs-go"
	yaml "gopkg.in/yaml.v3"

	"bpm/bosh"
	"bpm/config"
	"bpm/runc/adapter"
	"bpm/sysfeat"
)

// checked is what bpm-check prints.
type checked struct {
	Process      *config.ProcessConfig
	Capabilities *specs.LinuxCapabilities
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: bpm-check JOB BPM_YML")
		os.Exit(2)
	}
	result, err := check(os.Args[1], os.Args[2])
	if err != nil {
		fmt.Fprintf(os.Stderr, "bpm-check: %s: %s\n", os.Args[2], err)
		os.Exit(1)
	}
	if err := json.NewEncoder(os.Stdout).Encode(result); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func check(job, path string) (checked, error) {
	parsed, err := config.ParseJobConfig(path)
	if err != nil {
		return checked{}, fmt.Errorf("bpm's parser: %w", err)
	}
	if err := strict(path); err != nil {
		return checked{}, fmt.Errorf("not a key of bpm's config: %w", err)
	}
	env := bosh.NewEnv("/var/vcap")
	bpmCfg := config.NewBPMConfig(env, job, job)
	if err := parsed.Validate(env, bpmCfg.DefaultVolumes()); err != nil {
		return checked{}, fmt.Errorf("bpm's validation: %w", err)
	}
	process := named(parsed, job)
	if process == nil {
		return checked{}, fmt.Errorf("no process named %q, which `bpm start %s` runs", job, job)
	}
	spec, err := runcSpec(bpmCfg, process)
	if err != nil {
		return checked{}, fmt.Errorf("bpm's runc spec: %w", err)
	}
	return checked{Process: process, Capabilities: spec.Process.Capabilities}, nil
}

// strict decodes the file again, refusing keys that bpm's types do not have.
func strict(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	decoder := yaml.NewDecoder(bytes.NewReader(data))
	decoder.KnownFields(true)
	var cfg config.JobConfig
	return decoder.Decode(&cfg)
}

func named(cfg *config.JobConfig, name string) *config.ProcessConfig {
	for _, process := range cfg.Processes {
		if process.Name == name {
			return process
		}
	}
	return nil
}

// runcSpec builds the spec as `bpm start` would on a VM where every unrestricted volume exists (pre-start
// creates them), with seccomp available, for vcap.
func runcSpec(bpmCfg *config.BPMConfig, process *config.ProcessConfig) (specs.Spec, error) {
	existing := func(path string) ([]string, error) { return []string{path}, nil }
	runc := adapter.NewRuncAdapter(sysfeat.Features{SeccompSupported: true}, existing, nil, nil, nil)
	return runc.BuildSpec(lager.NewLogger("bpm-check"), bpmCfg, process, specs.User{UID: 1000, GID: 1000})
}
