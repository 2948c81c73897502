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

	boshlog "github.com/cloudfoundry/bosh-utils/logger"

	"github.com/flannel-dns/flannel-dns/src/restart-impact/impact"
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
	opts := impact.Options{
		Old: flags.Arg(0), New: flags.Arg(1), ReleaseDir: *releaseDir, Bosh: *bosh,
		RuntimeConfigs: runtimeConfigs, Teams: teams,
		Logger: boshlog.NewWriterLogger(boshlog.LevelError, stderr),
	}
	updates, err := impact.Run(opts, stdout)
	if err != nil {
		fmt.Fprintf(stderr, "Error: %s\n", err)
		return 2
	}
	if updates {
		return 1
	}
	return 0
}
