// Command restart-impact tells, per instance group, whether deploying NEW_MANIFEST over OLD_MANIFEST would make
// flannel-dns's jobs render differently (and which files), so that an operator can check a change before
// `bosh deploy`. The ((variables)) of flannel-dns's jobs get stand-in values from the bosh CLI's vars store, the same
// for both manifests: a changed credential value is not seen. Exit status: 0 nothing differs, 1 something
// differs, 2 it could not tell.
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
	"github.com/flannel-dns/flannel-dns/standin"
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
	bosh := flags.String("bosh", "bosh", "the bosh CLI, which generates stand-in credentials for ((variables))")
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
	in := inputs{old: flags.Arg(0), new: flags.Arg(1), releaseDir: *releaseDir, bosh: *bosh, runtimeConfigs: runtimeConfigs, teams: teams}
	updates, err := compare(in, stdout)
	if err != nil {
		fmt.Fprintf(stderr, "Error: %s\n", err)
		return 2
	}
	if updates {
		return 1
	}
	return 0
}

type inputs struct {
	old, new, releaseDir, bosh string
	runtimeConfigs, teams      []string
}

func compare(in inputs, stdout io.Writer) (bool, error) {
	var rcs [][]byte
	for _, path := range in.runtimeConfigs {
		raw, err := os.ReadFile(path)
		if err != nil {
			return false, bosherr.WrapErrorf(err, "Reading runtime config '%s'", path)
		}
		rcs = append(rcs, raw)
	}
	store, err := standin.NewStore(in.bosh)
	if err != nil {
		return false, err
	}
	defer store.Close()
	raws, err := readAll(in.old, in.new)
	if err != nil {
		return false, err
	}
	uses, err := variableUse(raws[0], raws[1])
	if err != nil {
		return false, err
	}
	manifests, err := store.Fill(impact.Release, raws...)
	if err != nil {
		return false, bosherr.WrapError(err, "Filling in stand-in credentials")
	}
	old, err := place(in.old, manifests[0], rcs, in.teams)
	if err != nil {
		return false, err
	}
	new, err := place(in.new, manifests[1], rcs, in.teams)
	if err != nil {
		return false, err
	}
	jobs := impact.NewJobs(in.releaseDir, jobrender.NewRenderer(boshlog.NewWriterLogger(boshlog.LevelError, os.Stderr)))
	groups, err := impact.Compare(old, new, jobs.Render, uses)
	if err != nil {
		return false, err
	}
	return impact.Write(stdout, groups)
}

func readAll(paths ...string) ([][]byte, error) {
	var raws [][]byte
	for _, path := range paths {
		raw, err := os.ReadFile(path)
		if err != nil {
			return nil, bosherr.WrapErrorf(err, "Reading manifest '%s'", path)
		}
		raws = append(raws, raw)
	}
	return raws, nil
}

// variableUse maps the new manifest's groups to the variables with changed definitions that they use; it reads
// the manifests before stand-in credentials replace the references.
func variableUse(old, new []byte) (map[string][]string, error) {
	changed, err := impact.ChangedVariables(old, new)
	if err != nil {
		return nil, err
	}
	d, err := placement.Place(placement.Input{Manifest: new})
	if err != nil {
		return nil, bosherr.WrapError(err, "New manifest")
	}
	return impact.VariableUse(d, changed), nil
}

func place(path string, manifest []byte, runtimeConfigs [][]byte, teams []string) (placement.Deployment, error) {
	d, err := placement.Place(placement.Input{Manifest: manifest, RuntimeConfigs: runtimeConfigs, Teams: teams})
	if err != nil {
		return placement.Deployment{}, bosherr.WrapErrorf(err, "Manifest '%s'", path)
	}
	return d, nil
}
