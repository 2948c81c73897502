// Package simcluster is what the commands that run the simulated cluster (demo, bench) share: the flags
// that say where the real parts are, and a teardown that also runs on Ctrl-C.
package simcluster

import (
	"github.com/flannel-dns/flannel-dns/src/testenv/cache"

	"flag"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"

	"github.com/flannel-dns/flannel-dns/src/e2e/cluster"
)

// Flags registers the flags naming the real parts and the work directory.
func Flags(cfg *cluster.Config) {
	flag.StringVar(&cfg.WorkDir, "work", "", "directory for the VMs' files (default: a new temporary directory)")
	flag.StringVar(&cfg.Packages, "packages", "", "directory of this release's compiled packages")
	flag.StringVar(&cfg.Cache, "cache", cache.Dir(), "the build cache: the bosh CLI, bpm and bosh-dns (scripts/setup)")
	flag.StringVar(&cfg.Repo, "repo", ".", "this checkout")
	flag.Func("lane", "the CFCR manifest and release versions: v0.21 (default), v0.32 or current", func(name string) error {
		lane, ok := cluster.Lanes[name]
		if !ok {
			return fmt.Errorf("no lane %q", name)
		}
		cfg.Lane = lane
		return nil
	})
	cfg.Lane = cluster.Lanes["v0.21"]
}

// Session is a cluster that is torn down once: by Teardown, or on SIGINT or SIGTERM, after which the
// process exits with status 130.
type Session struct {
	Cluster *cluster.Cluster
	WorkDir string
	signals chan os.Signal
	once    sync.Once
}

// Start creates the cluster in cfg.WorkDir, or in a new temporary directory named after prefix. The
// session comes back with an error too, so that Teardown removes what was created.
func Start(cfg cluster.Config, prefix string) (*Session, error) {
	s := &Session{WorkDir: cfg.WorkDir, signals: make(chan os.Signal, 1)}
	if s.WorkDir == "" {
		dir, err := os.MkdirTemp("", prefix)
		if err != nil {
			return s, bosherr.WrapError(err, "Creating the work directory")
		}
		s.WorkDir, cfg.WorkDir = dir, dir
	}
	signal.Notify(s.signals, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-s.signals
		fmt.Println("\ninterrupted")
		s.Teardown()
		os.Exit(130)
	}()
	var err error
	s.Cluster, err = cluster.New(cfg)
	return s, err
}

// Keep leaves the cluster running: a signal no longer tears it down.
func (s *Session) Keep() { signal.Stop(s.signals) }

// Teardown stops every process, removes every namespace and interface and the work directory.
func (s *Session) Teardown() {
	s.once.Do(func() {
		fmt.Println("==> tearing down: processes, namespaces, interfaces")
		if err := s.Cluster.Destroy(); err != nil {
			fmt.Fprintln(os.Stderr, "Error:", err)
		}
		if s.WorkDir != "" {
			_ = os.RemoveAll(s.WorkDir)
		}
	})
}
