// Command runc-nofile stands where a simulated VM's bpm package has runc: it lowers the open-file limit that a
// container spec asks for to this sandbox's hard limit, then runs the real runc (runc.real beside it) with the
// same arguments. A stemcell lets bpm give a job any limit (cfcr-etcd asks for 100000); this sandbox caps the
// hard limit at 20000 and grants no CAP_SYS_RESOURCE to raise it, so runc would fail to start such a job.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

func main() {
	if err := capBundle(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "runc-nofile: %v\n", err)
		os.Exit(1)
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(os.Stderr, "runc-nofile: %v\n", err)
		os.Exit(1)
	}
	real := filepath.Join(filepath.Dir(self), "runc.real")
	err = syscall.Exec(real, append([]string{real}, os.Args[1:]...), os.Environ())
	fmt.Fprintf(os.Stderr, "runc-nofile: running %s: %v\n", real, err)
	os.Exit(1)
}

// capBundle rewrites the config.json of the bundle that args name (--bundle or -b), if any.
func capBundle(args []string) error {
	for i, arg := range args {
		if (arg == "--bundle" || arg == "-b") && i+1 < len(args) {
			return capSpec(filepath.Join(args[i+1], "config.json"))
		}
	}
	return nil
}

func capSpec(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var spec map[string]any
	if err := json.Unmarshal(data, &spec); err != nil {
		return fmt.Errorf("parsing %s: %w", path, err)
	}
	var limit syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &limit); err != nil {
		return err
	}
	process, _ := spec["process"].(map[string]any)
	rlimits, _ := process["rlimits"].([]any)
	changed := false
	for _, r := range rlimits {
		rl, _ := r.(map[string]any)
		if rl["type"] != "RLIMIT_NOFILE" {
			continue
		}
		for _, key := range []string{"hard", "soft"} {
			if v, ok := rl[key].(float64); ok && v > float64(limit.Max) {
				rl[key], changed = limit.Max, true
			}
		}
	}
	if !changed {
		return nil
	}
	out, err := json.Marshal(spec)
	if err != nil {
		return err
	}
	return os.WriteFile(path, out, 0o600)
}
