// reaper runs keepalive.Reaper for the tests, in the network namespace it is started in, as the launcher does
// beside flanneld: every keepalive.ReaperTick until SIGTERM or SIGINT, logging to stdout.
//
//	reaper PID PORT
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	boshlog "github.com/cloudfoundry/bosh-utils/logger"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/keepalive"
)

func main() {
	if len(os.Args) != 3 {
		usage()
	}
	pid, pidErr := strconv.Atoi(os.Args[1])
	port, portErr := strconv.Atoi(os.Args[2])
	if pidErr != nil || portErr != nil {
		usage()
	}
	process, err := keepalive.OpenProcess(pid)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer process.Close()
	reaper, err := keepalive.NewReaper(process, port, boshlog.NewWriterLogger(boshlog.LevelDebug, os.Stdout))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer reaper.Close()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	ticker := time.NewTicker(keepalive.ReaperTick)
	defer ticker.Stop()
	fmt.Println("started")
	reaper.Run(ctx, ticker.C)
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: reaper PID PORT")
	os.Exit(2)
}
