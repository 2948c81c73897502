package launch

import (
	"context"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/flanneld"
	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/members"
)

// leaver leaves a dead etcd member where the kernel destroys no socket: it finds the healthy members again while
// flanneld runs on, and restarts flanneld on them; until they are found, flanneld runs on as it is.
type leaver struct {
	launcher  Launcher
	alongside *sync.WaitGroup
	restarts  chan<- []string
	busy      atomic.Bool
	next      atomic.Pointer[flanneld.SubnetFile] // noted before the restart, for the next flanneld's Started
}

func newLeaver(l Launcher, alongside *sync.WaitGroup, restarts chan<- []string) *leaver {
	v := &leaver{launcher: l, alongside: alongside, restarts: restarts}
	v.noteSubnetFile()
	return v
}

// subnetFile is the subnet file as it was before the flanneld that has just started.
func (v *leaver) subnetFile() flanneld.SubnetFile {
	return *v.next.Load()
}

func (v *leaver) noteSubnetFile() {
	file := flanneld.WatchSubnetFile(v.launcher.Config.Flanneld.SubnetFile)
	v.next.Store(&file)
}

// leave is the Reaper's hand-off for one flanneld: a dead peer while a restart is in flight is that restart's.
func (v *leaver) leave(ctx context.Context) func(dead netip.Addr) {
	return func(dead netip.Addr) {
		if !v.busy.CompareAndSwap(false, true) {
			return
		}
		v.alongside.Go(func() {
			defer v.busy.Store(false)
			v.restartWithout(ctx, dead)
		})
	}
}

// restartWithout restarts flanneld on the healthy members, found again while flanneld runs on. A restart on the
// same members still helps: like a destroyed socket, it makes flanneld connect anew, to a member that answers.
// The Reaper hands a dead member over once, so finding the members is retried until this flanneld ends.
func (v *leaver) restartWithout(ctx context.Context, dead netip.Addr) {
	for attempt := 1; ; attempt++ {
		urls, err := v.launcher.healthyURLs(ctx)
		if err == nil {
			v.restart(ctx, dead, urls)
			return
		}
		wait := v.launcher.backoff().Delay(attempt)
		v.launcher.Logger.Error(logTag, "Dead etcd member %s: flanneld keeps its connections to it until the healthy "+
			"members are found: attempt=%d retry_in=%s error='%s'", dead, attempt, wait.Round(time.Millisecond), err)
		select {
		case <-ctx.Done():
			return
		case <-v.launcher.Clock.After(wait):
		}
	}
}

func (v *leaver) restart(ctx context.Context, dead netip.Addr, urls []string) {
	v.launcher.Logger.Warn(logTag, "Dead etcd member %s: restarting flanneld on the healthy members, the kernel "+
		"destroys none of its sockets here: healthy='%s'", dead, strings.Join(urls, ","))
	v.noteSubnetFile()
	select {
	case v.restarts <- flanneld.Args(v.launcher.Config, urls):
	case <-ctx.Done():
	}
}

// healthyURLs makes one pass from the alias to the healthy members' URLs, without touching the network config.
func (l Launcher) healthyURLs(ctx context.Context) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, members.RequestTimeout)
	defer cancel()
	cluster, err := members.New(l.Config, l.Resolver, l.Logger)
	if err != nil {
		return nil, bosherr.WrapError(err, "Setting up TLS for etcd")
	}
	ips, err := l.Resolver.Lookup(ctx, l.Config.Etcd.Alias)
	if err != nil {
		return nil, bosherr.WrapErrorf(err, "Resolving the alias '%s'", l.Config.Etcd.Alias)
	}
	pass := cluster.NewPass()
	defer pass.Close()
	if _, err := pass.CheckServerCerts(ctx, ips); err != nil {
		return nil, err
	}
	list, err := pass.Members(ctx)
	if err != nil {
		return nil, err
	}
	if urls := members.HealthyURLs(list); len(urls) > 0 {
		return urls, nil
	}
	return nil, bosherr.Errorf("None of the %d members is healthy from here", len(list))
}
