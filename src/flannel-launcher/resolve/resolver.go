// Package resolve looks up a name's A and AAAA records with its own DNS client, asking either one configured
// server or the nameservers of a resolv.conf file (bosh-dns on a VM). It never talks to etcd.
//
//	r, err := resolve.New(cfg.DNS, cfg.Timing.DNSTimeout.D())
//	ips, err := r.Lookup(ctx, name)                    // one try; a *LookupError says why it failed
//	ips, err := r.WaitForAnswer(ctx, name, b, logger, nil)  // retries until ctx ends; then a *GaveUpError
//	resolve.NewWatcher(r, name, ips, logger).Run(ctx, ticker.C)
package resolve

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"sync"
	"time"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
	boshlog "github.com/cloudfoundry/bosh-utils/logger"
	"github.com/miekg/dns"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/config"
)

// Resolver asks its servers in order until one gives a definite answer.
type Resolver struct {
	servers []string
	timeout time.Duration
	// Logger, when set, is told once which addresses of an answer were left out (see MaxAddresses).
	Logger boshlog.Logger

	mu       sync.Mutex
	reported string // the last leaving out logged
}

// MaxAddresses caps the addresses a lookup returns: an etcd cluster has at most 7 or 9 members, and each address
// costs a TLS handshake.
const MaxAddresses = 16

// New uses dns.server when it is set, otherwise every nameserver of dns.resolv_conf. timeout bounds each query.
func New(cfg config.DNS, timeout time.Duration) (*Resolver, error) {
	if cfg.Server != "" {
		return ForServers([]string{cfg.Server}, timeout), nil
	}
	conf, err := dns.ClientConfigFromFile(cfg.ResolvConf)
	if err != nil {
		return nil, bosherr.WrapErrorf(err, "Reading dns.resolv_conf '%s'", cfg.ResolvConf)
	}
	if len(conf.Servers) == 0 {
		return nil, bosherr.Errorf("dns.resolv_conf '%s' lists no nameserver", cfg.ResolvConf)
	}
	servers := make([]string, len(conf.Servers))
	for i, server := range conf.Servers {
		servers[i] = net.JoinHostPort(server, conf.Port)
	}
	return ForServers(servers, timeout), nil
}

// ForServers asks the given host:port servers in order.
func ForServers(servers []string, timeout time.Duration) *Resolver {
	return &Resolver{servers: servers, timeout: timeout}
}

// Servers are the host:port addresses asked, in order.
func (r *Resolver) Servers() []string {
	return append([]string(nil), r.servers...)
}

// Lookup returns the name's IPv4 and IPv6 addresses. NXDOMAIN or an empty answer from a server is final, as
// with the system resolver; a failure or timeout moves on to the next server. The error is a *LookupError.
func (r *Resolver) Lookup(ctx context.Context, name string) ([]net.IP, error) {
	var lastErr error
	for _, server := range r.servers {
		ips, err := r.lookupAt(ctx, server, name)
		if err == nil {
			return ips, nil
		}
		lastErr = err
		if err.Cause == NXDomain || err.Cause == NoAddresses {
			break
		}
	}
	return nil, lastErr
}

func (r *Resolver) lookupAt(ctx context.Context, server, name string) ([]net.IP, *LookupError) {
	var ips []net.IP
	for _, qtype := range []uint16{dns.TypeA, dns.TypeAAAA} {
		found, err := r.query(ctx, server, name, qtype)
		if err != nil {
			return nil, err
		}
		ips = append(ips, found...)
	}
	if len(ips) == 0 {
		return nil, &LookupError{Name: name, Server: server, Cause: NoAddresses}
	}
	kept, dropped := bounded(ips)
	if len(kept) < len(ips) {
		r.report(fmt.Sprintf("'%s' at %s answered %d addresses, %d of them repeats; using %d, leaving out the repeats and: [%s]",
			name, server, len(ips), len(ips)-len(kept)-len(dropped), len(kept), joinIPs(dropped)))
	}
	return kept, nil
}

// bounded is ips without repeats, at most MaxAddresses of them: past that the lowest, so that the same answer in
// another order keeps the same ones; dropped are the distinct ones past the cap.
func bounded(ips []net.IP) (kept, dropped []net.IP) {
	seen := map[string]bool{}
	for _, ip := range ips {
		if !seen[string(ip.To16())] {
			seen[string(ip.To16())] = true
			kept = append(kept, ip)
		}
	}
	if len(kept) <= MaxAddresses {
		return kept, nil
	}
	slices.SortFunc(kept, func(a, b net.IP) int { return bytes.Compare(a.To16(), b.To16()) })
	return kept[:MaxAddresses], kept[MaxAddresses:]
}

// report logs a leaving out once, not at every lookup of a watch.
func (r *Resolver) report(message string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.Logger == nil || message == r.reported {
		return
	}
	r.reported = message
	r.Logger.Warn(logTag, "%s", message)
}

func (r *Resolver) query(ctx context.Context, server, name string, qtype uint16) ([]net.IP, *LookupError) {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	msg := new(dns.Msg)
	msg.SetQuestion(dns.Fqdn(name), qtype)
	resp, err := r.exchange(ctx, msg, server, "udp")
	if err == nil && resp.Truncated {
		resp, err = r.exchange(ctx, msg, server, "tcp")
	}
	if err != nil {
		return nil, exchangeError(ctx, name, server, err)
	}
	switch resp.Rcode {
	case dns.RcodeSuccess:
		return addresses(resp), nil
	case dns.RcodeNameError:
		return nil, &LookupError{Name: name, Server: server, Cause: NXDomain}
	default:
		return nil, &LookupError{Name: name, Server: server, Cause: ServerFailure, Rcode: resp.Rcode}
	}
}

func (r *Resolver) exchange(ctx context.Context, msg *dns.Msg, server, network string) (*dns.Msg, error) {
	client := &dns.Client{Net: network, Timeout: r.timeout}
	resp, _, err := client.ExchangeContext(ctx, msg, server)
	return resp, err
}

func exchangeError(ctx context.Context, name, server string, err error) *LookupError {
	var netErr net.Error
	if ctx.Err() != nil || (errors.As(err, &netErr) && netErr.Timeout()) {
		return &LookupError{Name: name, Server: server, Cause: Timeout, Err: err}
	}
	return &LookupError{Name: name, Server: server, Cause: Unreachable, Err: err}
}

func addresses(resp *dns.Msg) []net.IP {
	var ips []net.IP
	for _, rr := range resp.Answer {
		switch rec := rr.(type) {
		case *dns.A:
			ips = append(ips, rec.A)
		case *dns.AAAA:
			ips = append(ips, rec.AAAA)
		}
	}
	return ips
}
