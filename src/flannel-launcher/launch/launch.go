// Package launch is the `run` flow: resolve the alias, find the healthy etcd members, make sure the network
// config exists, then run flanneld while watching the alias. etcd is only talked to before flanneld starts.
package launch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"runtime/debug"
	"sync"
	"time"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
	boshlog "github.com/cloudfoundry/bosh-utils/logger"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/cnibridge"
	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/config"
	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/flanneld"
	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/keepalive"
	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/netconfig"
	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/publisher"
	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/resolve"
	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/status"
	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/subnetenv"
)

// Resolver looks up the alias and the members' names; *resolve.Resolver is one.
type Resolver interface {
	Lookup(ctx context.Context, name string) ([]net.IP, error)
	WaitForAnswer(ctx context.Context, name string, b resolve.Backoff, logger boshlog.Logger, failed func(error)) ([]net.IP, error)
}

// Reporter is told where the run is; *status.Recorder keeps it in the status file.
type Reporter interface {
	Retrying(reason string)
	FlanneldStarted(pid int, reason string)
	Waiting(reason string)
	Ready(reason string)
	Failed(reason string)
	Stopped(reason string)
}

// Launcher holds everything the run touches, so tests can swap the resolver, the process starter, the clock
// and the status reporter.
type Launcher struct {
	Config    config.Config
	Resolver  Resolver
	Starter   flanneld.Starter
	Clock     Clock
	Logger    boshlog.Logger
	KillAfter time.Duration
	Status    Reporter
	// Bridge is the CNI bridge whose address follows the node's subnet (package cnibridge); empty: none.
	Bridge string
}

// New wires the real parts: the DNS servers from cfg.DNS, flanneld as a child process, the wall clock.
func New(cfg config.Config, logger boshlog.Logger) (Launcher, error) {
	resolver, err := resolve.New(cfg.DNS, cfg.Timing.DNSTimeout.D())
	if err != nil {
		return Launcher{}, bosherr.WrapError(err, "Setting up the DNS resolver")
	}
	resolver.Logger = logger
	return Launcher{
		Config:    cfg,
		Resolver:  resolver,
		Starter:   flanneld.ExecStarter{Stdout: os.Stdout, Stderr: os.Stderr},
		Clock:     RealClock{},
		Logger:    logger,
		KillAfter: flanneld.DefaultKillAfter,
		Status:    status.NewRecorder("", logger, time.Now),
		Bridge:    cnibridge.Name,
	}, nil
}

// Run prepares and runs flanneld. It returns flanneld's exit status, or 1 and the reason when flanneld did
// not start. Signals from stop end the preparation, or are passed on to flanneld once it runs. Every step is
// reported to l.Status.
func (l Launcher) Run(stop <-chan os.Signal) (int, error) {
	found, err := l.prepare(stop)
	if err != nil {
		l.reportEnd(err)
		return 1, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	var alongside sync.WaitGroup
	defer alongside.Wait()
	defer cancel()
	alongside.Go(func() { l.watchAlias(ctx, found.aliasIPs) })

	args := flanneld.Args(l.Config, found.memberURLs)
	restarts := make(chan []string, 1)
	leaver := newLeaver(l, &alongside, restarts)
	cancelFlanneld := func() {}
	runner := flanneld.Runner{Starter: l.Starter, Logger: l.Logger, KillAfter: l.KillAfter, Restarts: restarts,
		Stopping: func(sig os.Signal) { l.Status.Stopped(fmt.Sprintf("stop signal (%s) passed on to flanneld", sig)) },
		Started: func(pid int) {
			// What watched the flanneld before a restart stops: each flanneld has its own sockets and subnet file.
			cancelFlanneld()
			var flanneldCtx context.Context
			flanneldCtx, cancelFlanneld = context.WithCancel(ctx)
			subnetFile := leaver.subnetFile()
			l.Status.FlanneldStarted(pid, fmt.Sprintf("waiting for flanneld to write its subnet file '%s'", subnetFile.Path))
			alongside.Go(func() { l.awaitSubnetFile(flanneldCtx, subnetFile, found.pod) })
			l.watchSockets(flanneldCtx, &alongside, pid, leaver.leave(flanneldCtx))
			// The launcher idles beside flanneld for the VM's lifetime: hand the start-up heap (etcd client,
			// TLS) back now, after flanneld's start rather than before it. From here on the live heap is small
			// but the keepalive tuner lists /proc/<pid>/fd every tick; at the default GOGC the heap would grow
			// to the runtime's 4 MiB minimum between collections, at 25 to 1 MiB.
			debug.FreeOSMemory()
			debug.SetGCPercent(steadyStateGCPercent)
		}}
	exitStatus, err := runner.Run(l.Config.Flanneld.Path, args, stop)
	if err != nil {
		l.Status.Failed(err.Error())
	} else {
		l.Status.Failed(fmt.Sprintf("flanneld exited with status %d", exitStatus))
	}
	return exitStatus, err
}

// reportEnd reports why the run ended before flanneld started.
func (l Launcher) reportEnd(err error) {
	var stopped *StoppedError
	if errors.As(err, &stopped) {
		l.Status.Stopped(err.Error())
		return
	}
	l.Status.Failed(err.Error())
}

// awaitSubnetFile reports ready once flanneld has written its subnet file (it does once its lease, routes and
// rules are in place) and the job's subnet-publisher has published it for docker's job and the CNI plugin.
// The CNI bridge follows the new subnet only then (and for the rest of the run): a pod made before would take
// the old subnet from the copy, and put its gateway back on the bridge. A file of another pod network than the
// network config flanneld was started on is never reported ready, and the bridge is left alone.
func (l Launcher) awaitSubnetFile(ctx context.Context, subnetFile flanneld.SubnetFile, pod netconfig.PodNetwork) {
	ticks := l.Clock.Ticks(ctx, subnetFilePoll)
	for !subnetFile.Written() {
		if !next(ctx, ticks) {
			return
		}
	}
	env, published := l.awaitPublished(ctx, ticks, subnetFile.Path)
	if !published {
		return
	}
	if err := l.onPodNetwork(subnetFile.Path, env, pod); err != nil {
		l.Logger.Error(logTag, "%s", err)
		l.Status.Waiting(err.Error())
		return
	}
	ready := func() {
		copyPath := l.Config.Flanneld.PublishedSubnetFile
		l.Logger.Info(logTag, "flanneld is ready: subnet_file=%s published=%s", subnetFile.Path, copyPath)
		l.Status.Ready(fmt.Sprintf("flanneld wrote its subnet file '%s', published as '%s'", subnetFile.Path, copyPath))
	}
	if l.Bridge == "" {
		ready()
		return
	}
	l.keepBridge(ctx, env, sync.OnceFunc(ready))
}

// awaitPublished waits until the copy holds what flanneld wrote at path, and says once why when the publisher
// refuses flanneld's file; false when ctx ended first.
func (l Launcher) awaitPublished(ctx context.Context, ticks <-chan time.Time, path string) (subnetenv.Env, bool) {
	copyPath := l.Config.Flanneld.PublishedSubnetFile
	l.Status.Waiting(fmt.Sprintf("waiting for subnet-publisher to publish flanneld's subnet file as '%s'", copyPath))
	var refused string
	for {
		env, err := publisher.Published(path, copyPath)
		if err == nil {
			return env, true
		}
		var pending *publisher.PendingError
		if !errors.As(err, &pending) && err.Error() != refused {
			refused = err.Error()
			l.Logger.Error(logTag, "flanneld wrote a subnet file that is not published: %s", err)
			l.Status.Waiting("flanneld wrote a subnet file that is not published: " + refused)
		}
		if !next(ctx, ticks) {
			return subnetenv.Env{}, false
		}
	}
}

// onPodNetwork fails when the subnet file's network or subnet length is not the pod network's; a zero pod
// network (a stored config that did not read as one) is not checked.
func (l Launcher) onPodNetwork(path string, env subnetenv.Env, pod netconfig.PodNetwork) error {
	if pod == (netconfig.PodNetwork{}) || env.Network == pod.Network && env.Subnet.Bits() == pod.SubnetLen {
		return nil
	}
	return bosherr.Errorf("flanneld's subnet file '%s' gives subnet %s of network %s, but the network config at '%s' that "+
		"flanneld was started on is %s: the launcher does not report ready; restart the job once that config is settled",
		path, env.Subnet, env.Network, l.Config.Etcd.NetworkConfigKey(), pod)
}

// next waits for the next tick; false when ctx ended first.
func next(ctx context.Context, ticks <-chan time.Time) bool {
	select {
	case <-ctx.Done():
		return false
	case <-ticks:
		return true
	}
}

// keepBridge takes from the CNI bridge the gateway of a subnet the node no longer has (kubo-release #228), at
// once and whenever docker's start puts one back, until ctx ends; ready runs once the bridge was first checked.
// A failure is logged: flanneld runs on.
func (l Launcher) keepBridge(ctx context.Context, subnets subnetenv.Env, ready func()) {
	subnet := subnets.Subnet
	err := cnibridge.Keep(ctx, nil, l.Bridge, subnets.Network, subnet, func(removed []netip.Prefix, err error) {
		for _, old := range removed {
			l.Logger.Warn(logTag, "Removed %s from the CNI bridge %s: this node's subnet is now %s; pods still on the old "+
				"subnet are cut off until they are made again", old, l.Bridge, subnet)
		}
		if err != nil {
			l.Logger.Error(logTag, "CNI bridge %s keeps an address of pod network %s outside subnet %s, new pods will be "+
				"refused: %s", l.Bridge, subnets.Network, subnet, err)
		}
		ready()
	})
	if err != nil {
		l.Logger.Error(logTag, "CNI bridge %s not kept in step with subnet %s: %s", l.Bridge, subnet, err)
	}
	ready()
}

// subnetFilePoll is how often the run looks for flanneld's subnet file until it is there.
const subnetFilePoll = 100 * time.Millisecond

// watchAlias logs how the alias' answer changes; it never talks to etcd and never restarts flanneld.
func (l Launcher) watchAlias(ctx context.Context, current []net.IP) {
	watcher := resolve.NewWatcher(l.Resolver, l.Config.Etcd.Alias, current, l.Logger)
	watcher.Run(ctx, l.Clock.Ticks(ctx, l.Config.Timing.ResolveInterval.D()))
}

// kernelTimeouts is what flanneld waits on a dead member without the launcher, under a stemcell's sysctls
// (tcp_keepalive_time 120, tcp_keepalive_intvl 30, tcp_keepalive_probes 8; tcp_retries2 left at 15).
const kernelTimeouts = "on a stemcell 6 min on an idle socket, about 15 min with data in flight"

// watchSockets takes a handle on flanneld at once, while its PID cannot name another process (Started runs
// before flanneld is waited for), and tunes keepalive beside it; leave is the fallback's way to leave a dead member
// where the kernel destroys no socket.
func (l Launcher) watchSockets(ctx context.Context, alongside *sync.WaitGroup, pid int, leave func(netip.Addr)) {
	process, err := keepalive.OpenProcess(pid)
	if err != nil {
		l.Logger.Error(logTag, "Dead etcd members: cannot watch flanneld's sockets, they keep the kernel's "+
			"timeouts (%s): %s", kernelTimeouts, err)
		return
	}
	alongside.Go(func() {
		defer process.Close()
		l.tuneKeepalive(ctx, process, leave)
	})
}

// tuneKeepalive makes flanneld notice a dead etcd member within seconds (docs/failover.md): it sets keepalive on
// flanneld's etcd sockets, whose client sets none, and when the kernel refuses that for good (bpm's seccomp
// profile, a kernel before 5.6), switches to the Reaper for the rest of flanneld's life.
func (l Launcher) tuneKeepalive(ctx context.Context, process *keepalive.Process, leave func(netip.Addr)) {
	tuner := keepalive.NewTuner(process, l.Config.Etcd.Port, keepalive.DefaultSettings(), l.Logger)
	refusal := tuner.Run(ctx, l.Clock.Ticks(ctx, keepaliveTick))
	if refusal == nil {
		return
	}
	l.Logger.Warn(logTag, "Dead etcd members: switching from keepalive tuning to ICMP echo + SOCK_DESTROY for the rest "+
		"of flanneld's life, because the kernel refused pidfd_open/pidfd_getfd for good: %s", refusal)
	reaper, err := keepalive.NewReaper(process, l.Config.Etcd.Port, l.Logger, leave)
	if err != nil {
		l.Logger.Error(logTag, "Dead etcd members: the fallback cannot start, flanneld's sockets keep the kernel's "+
			"timeouts (%s): %s", kernelTimeouts, err)
		return
	}
	defer reaper.Close()
	reaper.Run(ctx, l.Clock.Ticks(ctx, keepalive.ReaperTick))
}

// steadyStateGCPercent trades a few more collections of a tiny heap for about 3 MiB less resident memory.
const steadyStateGCPercent = 25

// keepaliveTick is how soon a new flanneld connection to etcd gets its keepalive settings (one tuned late still
// fails on time: the keepalive timer counts from the last segment received). The fallback has a tick of its own,
// keepalive.ReaperTick.
const keepaliveTick = 2 * time.Second

// prepare runs until flanneld can start, the startup deadline passes, or a stop signal comes.
func (l Launcher) prepare(stop <-chan os.Signal) (discovery, error) {
	ctx, cancel := context.WithTimeout(context.Background(), l.Config.Timing.StartupDeadline.D())
	defer cancel()
	stopWatch := cancelOnStop(cancel, stop)
	found, err := l.discover(ctx)
	if sig := stopWatch(); sig != nil {
		l.Logger.Info(logTag, "stop signal before flanneld started: signal=%s", sig)
		return discovery{}, &StoppedError{Signal: sig.String()}
	}
	return found, err
}

// cancelOnStop cancels when a signal comes from stop before the returned function is called; that function
// returns the signal, or nil when none came.
func cancelOnStop(cancel context.CancelFunc, stop <-chan os.Signal) func() os.Signal {
	quit := make(chan struct{})
	received := make(chan os.Signal, 1)
	go func() {
		select {
		case sig := <-stop:
			cancel()
			received <- sig
		case <-quit:
			received <- nil
		}
	}()
	return func() os.Signal {
		close(quit)
		return <-received
	}
}

const logTag = "launch"
