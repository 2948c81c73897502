// Command recordingflanneld stands in for flanneld in tests: it records its arguments and environment, then
// exits with a given status or waits for SIGTERM/SIGINT and records the signal. See package record for the
// env vars that steer it.
package main

import (
	"fmt"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/flannel-dns/flannel-dns/src/testenv/recordingflanneld/record"
)

func main() {
	os.Exit(run(time.Now()))
}

func run(started time.Time) int {
	path := os.Getenv(record.FileEnv)
	if path == "" {
		fmt.Fprintf(os.Stderr, "recordingflanneld: %s is not set\n", record.FileEnv)
		return 99
	}
	signals := make(chan os.Signal, 4)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)

	if address := os.Getenv(record.DialEnv); address != "" {
		// Like flanneld's etcd client: no keepalive of its own. Held open until the process ends.
		conn, err := (&net.Dialer{KeepAlive: -1}).Dial("tcp", address)
		if err != nil {
			fmt.Fprintf(os.Stderr, "recordingflanneld: connecting to %s: %s\n", address, err)
			return 99
		}
		defer conn.Close()
	}
	rec := record.Record{Started: started.UnixNano(), Args: os.Args[1:], Env: os.Environ(), PID: os.Getpid(), Signals: []string{}}
	if err := record.Write(path, rec); err != nil {
		fmt.Fprintf(os.Stderr, "recordingflanneld: writing %s: %s\n", path, err)
		return 99
	}
	if content := os.Getenv(record.SubnetFileEnv); content != "" {
		if err := writeSubnetFile(rec, content); err != nil {
			fmt.Fprintf(os.Stderr, "recordingflanneld: %s\n", err)
			return 99
		}
	}
	if status, set := envInt(record.ExitEnv); set {
		return status
	}
	for sig := range signals {
		rec.Signals = append(rec.Signals, sig.String())
		if err := record.Write(path, rec); err != nil {
			fmt.Fprintf(os.Stderr, "recordingflanneld: writing %s: %s\n", path, err)
			return 99
		}
		if os.Getenv(record.IgnoreSignalEnv) != "true" {
			status, _ := envInt(record.SignalExitEnv)
			return status
		}
	}
	return 0
}

func envInt(name string) (int, bool) {
	value, err := strconv.Atoi(os.Getenv(name))
	return value, err == nil
}

func writeSubnetFile(rec record.Record, content string) error {
	path, found := rec.Flag("subnet-file")
	if !found {
		return fmt.Errorf("%s is set but there is no -subnet-file", record.SubnetFileEnv)
	}
	return record.Replace(path, []byte(content))
}
