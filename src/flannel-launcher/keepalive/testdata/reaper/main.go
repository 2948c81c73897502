// reaper runs keepalive.Reaper for the tests, in the network namespace it is started in, as the launcher does
// beside flanneld: every keepalive.ReaperTick until SIGTERM or SIGINT, logging to stdout. With -leave, a dead
// peer that the kernel does not let it destroy the connections to is printed as "leave ADDRESS".
//
//	reaper PID PORT [-leave]
package main

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	boshlog "github.com/cloudfoundry/bosh-utils/logger"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/keepalive"
)

func main() {
	if len(os.Args) != 3 && (len(os.Args) != 4 || os.Args[3] != "-leave") {
		usage()
	}
	var leave func(netip.Addr)
	if len(os.Args) == 4 {
		leave = func(dead netip.Addr) { fmt.Println("leave", dead) }
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
	reaper, err := keepalive.NewReaper(process, port, boshlog.NewWriterLogger(boshlog.LevelDebug, os.Stdout), leave)
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
	fmt.Fprintln(os.Stderr, "usage: reaper PID PORT [-leave]")
	os.Exit(2)
}
