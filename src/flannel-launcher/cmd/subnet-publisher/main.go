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
)

// version is set at build time: -ldflags "-X main.version=..."
var version = "dev"

const (
	logTag = "subnet-publisher"
	usage  = `usage:
  subnet-publisher --from FILE --to FILE   publish flanneld's subnet file FILE (--from) as FILE (--to), as root,
                                           until SIGTERM or SIGINT
  subnet-publisher version                 print the version
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
	p, err := parse(args, logger)
	if err != nil {
		fmt.Fprintf(os.Stderr, "subnet-publisher: %s\n%s", err, usage)
		return exitUsage
	}
	logger.Info(logTag, "starting: version=%s from=%s to=%s", version, p.From, p.To)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	ticker := time.NewTicker(publisher.Interval)
	defer ticker.Stop()
	p.Run(ctx, ticker.C)
	logger.Info(logTag, "stopping: '%s' stays, docker's job reads it when it stops too", p.To)
	return 0
}

func parse(args []string, logger boshlog.Logger) (*publisher.Publisher, error) {
	flags := flag.NewFlagSet("subnet-publisher", flag.ContinueOnError)
	flags.SetOutput(io.Discard)
	from := flags.String("from", "", "flanneld's subnet file")
	to := flags.String("to", "", "the copy that docker's job and the CNI plugin read")
	if err := flags.Parse(args); err != nil {
		return nil, err
	}
	switch {
	case *from == "" || *to == "":
		return nil, errors.New("--from and --to are required")
	case flags.NArg() > 0:
		return nil, fmt.Errorf("unexpected argument '%s'", flags.Arg(0))
	case os.Geteuid() != 0:
		return nil, errors.New("must run as root: the copy it writes must be root's alone")
	}
	return publisher.New(*from, *to, logger)
}
