// Command flannel-launcher finds etcd through the bosh-dns alias and runs flanneld (`run`), reports what it
// sees (`check`), or waits until a run reports flanneld ready (`wait-ready`). main only wires the packages and
// maps errors to exit statuses.
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

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/check"
	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/config"
	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/launch"
	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/status"
	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/termtext"
)

// version is set at build time: -ldflags "-X main.version=..."
var version = "dev"

const (
	logTag = "flannel-launcher"
	usage  = `usage:
  flannel-launcher run --config FILE [--status FILE]   find etcd through the alias and run flanneld,
                                                       keeping the run's status in FILE
  flannel-launcher check --config FILE [--json]        report what this VM sees; exit 0 when flanneld could start
  flannel-launcher wait-ready --config FILE --status FILE [--timeout 60s]
                                                       wait until the run reports flanneld ready and its subnet
                                                       file is published; exit 1 with the reason when the run
                                                       fails or the timeout passes
  flannel-launcher version                             print the version
`
	exitFailure = 1
	exitUsage   = 2
)

func main() {
	os.Exit(run(os.Args))
}

func run(args []string) int {
	if len(args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		return exitUsage
	}
	switch args[1] {
	case "run":
		return runCommand(args[2:])
	case "check":
		return checkCommand(args[2:])
	case "wait-ready":
		return waitReadyCommand(args[2:])
	case "version":
		fmt.Println(version)
		return 0
	case "help", "-h", "-help", "--help":
		fmt.Print(usage)
		return 0
	}
	fmt.Fprintf(os.Stderr, "unknown command '%s'\n%s", args[1], usage)
	return exitUsage
}

func runCommand(args []string) int {
	stop := make(chan os.Signal, 2)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	logger := newLogger(boshlog.LevelInfo)
	flags, configPath := newFlags("run")
	statusPath := flags.String("status", "", "the file that keeps the run's status, for wait-ready")
	if err := flags.Parse(args); err != nil || *configPath == "" {
		return usageError(flags, err)
	}
	logger.Info(logTag, "starting: version=%s config=%s status=%s", version, *configPath, *statusPath)
	recorder := status.NewRecorder(*statusPath, logger, time.Now)
	cfg, err := config.Load(*configPath)
	if err != nil {
		recorder.Failed(err.Error())
		return configError(logger, err)
	}
	launcher, err := launch.New(cfg, logger)
	if err != nil {
		recorder.Failed(err.Error())
		return fail(logger, err)
	}
	launcher.Status = recorder
	exitStatus, err := launcher.Run(stop)
	if err != nil {
		return fail(logger, err)
	}
	logger.Info(logTag, "exiting with flanneld's status: status=%d", exitStatus)
	return exitStatus
}

// waitReadyCommand is the job's post-start: it prints each change of the run's status and exits 0 once
// flanneld is ready, 1 with the run's reason otherwise.
func waitReadyCommand(args []string) int {
	logger := newLogger(boshlog.LevelWarn)
	flags, configPath := newFlags("wait-ready")
	statusPath := flags.String("status", "", "the status file that run keeps")
	timeout := flags.Duration("timeout", defaultReadyTimeout, "how long to wait")
	err := flags.Parse(args)
	if err == nil && (*configPath == "" || *statusPath == "") {
		err = errors.New("--config and --status are required")
	} else if err == nil && *timeout <= 0 {
		err = fmt.Errorf("--timeout must be longer than zero, got '%s'", *timeout)
	}
	if err != nil {
		return usageError(flags, err)
	}
	cfg, err := config.Load(*configPath)
	if err != nil {
		return configError(logger, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	waiter := status.Waiter{StatusFile: *statusPath, SubnetFile: cfg.Flanneld.SubnetFile,
		PublishedFile: cfg.Flanneld.PublishedSubnetFile, Interval: readyPoll,
		Progress: func(s status.Status) { fmt.Printf("flanneld: %s\n", termtext.Escape(s.String())) }}
	if _, err := waiter.Wait(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "flanneld is not ready: %s\n", termtext.Escape(err.Error()))
		return exitFailure
	}
	fmt.Println("flanneld is ready")
	return 0
}

const (
	defaultReadyTimeout = 60 * time.Second
	readyPoll           = 250 * time.Millisecond
)

func checkCommand(args []string) int {
	logger := newLogger(boshlog.LevelWarn)
	flags, configPath := newFlags("check")
	asJSON := flags.Bool("json", false, "print the report as JSON")
	if err := flags.Parse(args); err != nil || *configPath == "" {
		return usageError(flags, err)
	}
	cfg, err := config.Load(*configPath)
	if err != nil {
		return configError(logger, err)
	}
	if err := check.Run(cfg, *asJSON, os.Stdout, logger); err != nil {
		return fail(logger, err)
	}
	return 0
}

func newFlags(command string) (*flag.FlagSet, *string) {
	flags := flag.NewFlagSet(command, flag.ContinueOnError)
	flags.SetOutput(io.Discard)
	return flags, flags.String("config", "", "the launcher's JSON config file")
}

func usageError(flags *flag.FlagSet, err error) int {
	if errors.Is(err, flag.ErrHelp) {
		fmt.Print(usage)
		return 0
	}
	if err == nil {
		err = errors.New("--config is required")
	}
	fmt.Fprintf(os.Stderr, "%s: %s\n%s", flags.Name(), err, usage)
	return exitUsage
}

// configError logs every problem of a config that could not be loaded, one line each; nothing was started.
func configError(logger boshlog.Logger, err error) int {
	var invalid *config.InvalidError
	if !errors.As(err, &invalid) {
		logger.Error(logTag, "%s", err)
		return exitUsage
	}
	for _, problem := range invalid.Problems {
		logger.Error(logTag, "invalid config: %s", problem)
	}
	return exitUsage
}

// fail logs why flanneld did not start or check could not finish. A report that says "not ready" has
// said why already.
func fail(logger boshlog.Logger, err error) int {
	if !errors.Is(err, check.ErrNotReady) {
		logger.Error(logTag, "%s", err)
	}
	return exitFailure
}

func newLogger(level boshlog.LogLevel) boshlog.Logger {
	logger := boshlog.NewWriterLogger(level, os.Stderr)
	logger.UseRFC3339Timestamps()
	return logger
}
