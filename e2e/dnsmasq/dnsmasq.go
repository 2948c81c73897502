// Package dnsmasq runs dnsmasq as the simulated bosh-dns: A records from a hosts file that the
// harness rewrites on every instance change and reloads with SIGHUP, as the director's sync_dns does.
package dnsmasq

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
)

// Records maps a name to its addresses.
type Records map[string][]string

// Server is a running dnsmasq.
type Server struct {
	hostsFile string
	args      []string
	cmd       *exec.Cmd
	exited    chan struct{} // closed when cmd has exited
}

// Start runs dnsmasq in namespace ns on listen:53. Names under the local domains that have no record
// get NXDOMAIN (bosh-dns's answer); nothing is forwarded anywhere.
func Start(ns, listen, dir string, localDomains []string) (*Server, error) {
	s := &Server{hostsFile: filepath.Join(dir, "records.hosts")}
	if err := s.write(Records{}); err != nil {
		return nil, err
	}
	args := []string{"netns", "exec", ns, "dnsmasq", "--keep-in-foreground", "--no-resolv", "--no-hosts",
		"--addn-hosts=" + s.hostsFile, "--listen-address=" + listen, "--bind-interfaces",
		"--pid-file=", "--user=root", "--local-ttl=0", "--log-facility=" + filepath.Join(dir, "dnsmasq.log")}
	for _, d := range localDomains {
		args = append(args, "--local=/"+d+"/")
	}
	s.args = args
	if err := s.run(); err != nil {
		return nil, err
	}
	return s, nil
}

// Resume starts dnsmasq again after Stop, with the records it had: a DNS server coming back from an outage.
// A running dnsmasq is left alone.
func (s *Server) Resume() error {
	select {
	case <-s.exited:
		return s.run()
	default:
		return nil
	}
}

func (s *Server) run() error {
	cmd := exec.Command("ip", s.args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return bosherr.WrapError(err, "Starting dnsmasq")
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	s.cmd, s.exited = cmd, exited
	return nil
}

// Set replaces every record and makes dnsmasq read them again.
func (s *Server) Set(records Records) error {
	if err := s.write(records); err != nil {
		return err
	}
	if err := s.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		return bosherr.WrapError(err, "Reloading dnsmasq")
	}
	return nil
}

// Stop ends dnsmasq and waits until it has gone (its port is free for Resume then).
func (s *Server) Stop() {
	if s == nil || s.cmd == nil || s.cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	select {
	case <-s.exited:
	case <-time.After(5 * time.Second):
	}
}

// write replaces the hosts file atomically, so a reload never reads half of it.
func (s *Server) write(records Records) error {
	names := make([]string, 0, len(records))
	for name := range records {
		names = append(names, name)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, name := range names {
		for _, addr := range records[name] {
			if net.ParseIP(addr) == nil {
				return bosherr.Errorf("Record %s: address '%s' is not an IP address", name, addr)
			}
			fmt.Fprintf(&b, "%s %s\n", addr, name)
		}
	}
	tmp := s.hostsFile + ".tmp"
	if err := os.WriteFile(tmp, []byte(b.String()), 0o644); err != nil {
		return bosherr.WrapError(err, "Writing DNS records")
	}
	return os.Rename(tmp, s.hostsFile)
}
