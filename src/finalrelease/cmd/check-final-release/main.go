// Command check-final-release checks that the final release the README names is what an operator should get,
// printing one line per check: (a) every releases/flannel-dns/flannel-dns-N.yml the README names is the newest
// final release; (b) that release rebuilds offline from the committed archives, each job and package archive
// with the digest its manifest records; (c) its fingerprints are those of main's dev release, or the README
// says which commit it was cut from and names every job and package main has changed since. Exit status: 0 all
// pass, 1 one fails, 2 bad usage.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/flannel-dns/flannel-dns/src/finalrelease"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("check-final-release", flag.ContinueOnError)
	flags.SetOutput(stderr)
	repo := flags.String("repo", ".", "the repository; its HEAD is rebuilt")
	bosh := flags.String("bosh", "bosh", "the bosh CLI")
	devTarball := flags.String("dev-tarball", "", "the dev release built from the checkout (scripts/test-release's)")
	if err := flags.Parse(args); err != nil {
		return 2
	}
	if flags.NArg() != 0 || *devTarball == "" {
		fmt.Fprintln(stderr, "Usage: check-final-release [--repo DIR] [--bosh BOSH] --dev-tarball TGZ")
		flags.PrintDefaults()
		return 2
	}
	version, err := finalrelease.NewestVersion(*repo)
	if err != nil {
		fmt.Fprintf(stdout, "FAILED: %s\n", err)
		return 1
	}
	var boshLog bytes.Buffer
	checks := []struct {
		run func() (string, error)
		log *bytes.Buffer // shown when the check fails
	}{
		{run: func() (string, error) { return finalrelease.CheckNamed(*repo, version) }},
		{run: func() (string, error) { return finalrelease.CheckRebuild(*repo, *bosh, version, &boshLog) }, log: &boshLog},
		{run: func() (string, error) { return finalrelease.CheckFingerprints(*repo, *devTarball, version) }},
	}
	status := 0
	for i, check := range checks {
		summary, err := check.run()
		if err == nil {
			fmt.Fprintf(stdout, "(%c) ok: %s\n", 'a'+i, summary)
			continue
		}
		fmt.Fprintf(stdout, "(%c) FAILED: %s\n", 'a'+i, err)
		if check.log != nil {
			fmt.Fprintf(stderr, "(%c) its output:\n%s", 'a'+i, check.log)
		}
		status = 1
	}
	return status
}
