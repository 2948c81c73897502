// Command restart-impact tells, per instance group, whether deploying NEW_MANIFEST over OLD_MANIFEST would make
// flannel-dns's jobs render differently (and which files), so that an operator can check a change before
// `bosh deploy`. Exit status: 0 nothing differs, 1 something differs, 2 it could not tell.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
	boshlog "github.com/cloudfoundry/bosh-utils/logger"

	"github.com/flannel-dns/flannel-dns/impact"
	"github.com/flannel-dns/flannel-dns/jobrender"
	"github.com/flannel-dns/flannel-dns/placement"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

type repeated []string

func (r *repeated) String() string     { return fmt.Sprint(*r) }
func (r *repeated) Set(v string) error { *r = append(*r, v); return nil }

func run(args []string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("restart-impact", flag.ContinueOnError)
	flags.SetOutput(stderr)
	releaseDir := flags.String("release-dir", ".", "the flannel-dns release directory (its jobs/ are rendered)")
	var runtimeConfigs, teams repeated
	flags.Var(&runtimeConfigs, "runtime-config", "a runtime config file whose addons apply (repeatable)")
	flags.Var(&teams, "team", "a team of the deployment, for addons filtered on teams (repeatable)")
	flags.Usage = func() {
		fmt.Fprintln(stderr, "Usage: restart-impact [flags] OLD_MANIFEST NEW_MANIFEST")
		flags.PrintDefaults()
	}
	if err := flags.Parse(args); err != nil {
		return 2
	}
	if flags.NArg() != 2 {
		flags.Usage()
		return 2
	}
	updates, err := compare(flags.Arg(0), flags.Arg(1), *releaseDir, runtimeConfigs, teams, stdout)
	if err != nil {
		fmt.Fprintf(stderr, "Error: %s\n", err)
		return 2
	}
	if updates {
		return 1
	}
	return 0
}

func compare(oldPath, newPath, releaseDir string, runtimeConfigs, teams []string, stdout io.Writer) (bool, error) {
	var rcs [][]byte
	for _, path := range runtimeConfigs {
		raw, err := os.ReadFile(path)
		if err != nil {
			return false, bosherr.WrapErrorf(err, "Reading runtime config '%s'", path)
		}
		rcs = append(rcs, raw)
	}
	old, err := place(oldPath, rcs, teams)
	if err != nil {
		return false, err
	}
	new, err := place(newPath, rcs, teams)
	if err != nil {
		return false, err
	}
	jobs := impact.NewJobs(releaseDir, jobrender.NewRenderer(boshlog.NewWriterLogger(boshlog.LevelError, os.Stderr)))
	groups, err := impact.Compare(old, new, jobs.Render)
	if err != nil {
		return false, err
	}
	return impact.Write(stdout, groups)
}

func place(path string, runtimeConfigs [][]byte, teams []string) (placement.Deployment, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return placement.Deployment{}, bosherr.WrapErrorf(err, "Reading manifest '%s'", path)
	}
	d, err := placement.Place(placement.Input{Manifest: raw, RuntimeConfigs: runtimeConfigs, Teams: teams})
	if err != nil {
		return placement.Deployment{}, bosherr.WrapErrorf(err, "Manifest '%s'", path)
	}
	return d, nil
}
