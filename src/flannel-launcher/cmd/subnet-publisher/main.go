// Command subnet-publisher keeps the subnet file that docker's job and the flannel CNI plugin read, as root,
// equal to the last valid one flanneld wrote (package publisher). The flanneld job's monit file runs it as
// root, outside bpm: it is what writes into the directory that root alone can write.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	boshlog "github.com/cloudfoundry/bosh-utils/logger"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/publisher"
	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/status"
)

// version is set at build time: -ldflags "-X main.version=..."
var version = "dev"

const (
	logTag = "subnet-publisher"
	usage  = `usage:
  subnet-publisher --from FILE --to FILE [--keep FILE [--status FILE]]
      publish flanneld's subnet file (--from) as --to, as root, until SIGTERM or SIGINT; with --keep, keep a
      second copy there, marked current when flanneld has just written its file, and every minute while the
      launcher's status file (--status) reports flanneld ready
  subnet-publisher restore --keep FILE --to FILE
      write the kept copy to --to when --to is missing and the copy is younger than 50 minutes (at boot)
  subnet-publisher version
      print the version
`
	exitUsage = 2
)

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	if len(args) == 1 && args[0] == "version" {
		fmt.Println(version)
		return 0
	}
	logger := boshlog.NewWriterLogger(boshlog.LevelInfo, os.Stderr)
	logger.UseRFC3339Timestamps()
	if len(args) > 0 && args[0] == "restore" {
		return restore(args[1:], logger)
	}
	p, statusFile, err := parse(args, logger)
	if err != nil {
		fmt.Fprintf(os.Stderr, "subnet-publisher: %s\n%s", err, usage)
		return exitUsage
	}
	logger.Info(logTag, "starting: version=%s from=%s to=%s keep=%s status=%s", version, p.From, p.To, p.Keep, statusFile)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	ticker, marker := time.NewTicker(publisher.Interval), time.NewTicker(publisher.MarkEvery)
	defer ticker.Stop()
	defer marker.Stop()
	p.Run(ctx, ticker.C, marker.C)
	logger.Info(logTag, "stopping: '%s' stays, docker's job reads it when it stops too", p.To)
	return 0
}

func parse(args []string, logger boshlog.Logger) (*publisher.Publisher, string, error) {
	flags := flag.NewFlagSet("subnet-publisher", flag.ContinueOnError)
	flags.SetOutput(io.Discard)
	from := flags.String("from", "", "flanneld's subnet file")
	to := flags.String("to", "", "the copy that docker's job and the CNI plugin read")
	keep := flags.String("keep", "", "a second copy, on a disk that a reboot keeps")
	statusFile := flags.String("status", "", "the launcher's status file")
	if err := flags.Parse(args); err != nil {
		return nil, "", err
	}
	switch {
	case *from == "" || *to == "":
		return nil, "", errors.New("--from and --to are required")
	case flags.NArg() > 0:
		return nil, "", fmt.Errorf("unexpected argument '%s'", flags.Arg(0))
	case os.Geteuid() != 0:
		return nil, "", errors.New("must run as root: the copy it writes must be root's alone")
	}
	p, err := publisher.New(*from, *to, *keep, logger)
	if err == nil && *statusFile != "" {
		p.FlanneldReady = reportsReady(*statusFile)
	}
	return p, *statusFile, err
}

// reportsReady tells whether the launcher's status file at path says that flanneld is ready.
func reportsReady(path string) func() bool {
	return func() bool {
		s, err := status.Read(path)
		return err == nil && s.State == status.Ready
	}
}

// restore is `subnet-publisher restore`: exit 0 whether or not it restored, 1 when it could not.
func restore(args []string, logger boshlog.Logger) int {
	flags := flag.NewFlagSet("subnet-publisher restore", flag.ContinueOnError)
	flags.SetOutput(io.Discard)
	keep := flags.String("keep", "", "the kept copy")
	to := flags.String("to", "", "the published file")
	err := flags.Parse(args)
	switch {
	case err != nil:
	case *keep == "" || *to == "":
		err = errors.New("--keep and --to are required")
	case flags.NArg() > 0:
		err = fmt.Errorf("unexpected argument '%s'", flags.Arg(0))
	}
	for _, path := range []string{*keep, *to} {
		if err == nil {
			err = publisher.CheckPath(path)
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "subnet-publisher restore: %s\n%s", err, usage)
		return exitUsage
	}
	restored, err := publisher.Restore(*keep, *to, time.Now())
	switch {
	case err != nil:
		logger.Error(logTag, "Not restoring '%s': %s", *to, err)
		return 1
	case restored:
		logger.Info(logTag, "Restored '%s' from the kept copy '%s'", *to, *keep)
	}
	return 0
}
