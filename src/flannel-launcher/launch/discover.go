package launch

import (
	"context"
	"errors"
	"net"
	"time"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/members"
	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/netconfig"
	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/resolve"
)

type discovery struct {
	aliasIPs   []net.IP
	memberURLs []string
	pod        netconfig.PodNetwork // of the network config flanneld starts on; zero when it does not read as one
}

// discover retries attempts with capped, jittered backoff until one succeeds, one fails for good, or ctx ends.
func (l Launcher) discover(ctx context.Context) (discovery, error) {
	cluster, err := members.New(l.Config, l.Resolver, l.Logger)
	if err != nil {
		return discovery{}, &GiveUpError{Step: "setting up TLS for etcd", Err: err}
	}
	start := time.Now()
	var last *RetryError
	for attempt := 1; ; attempt++ {
		found, err := l.attempt(ctx, cluster, attempt)
		if err == nil {
			return found, nil
		}
		var retry *RetryError
		retryable := errors.As(err, &retry)
		// An attempt the deadline cut short failed on the deadline, not on etcd; the one before says more.
		if retryable && (last == nil || ctx.Err() == nil) {
			last = retry
		}
		switch {
		case ctx.Err() != nil && last != nil:
			return discovery{}, deadlinePassed(last, time.Since(start))
		case !retryable:
			return discovery{}, err
		}
		wait := l.backoff().Delay(attempt)
		l.Logger.Warn(logTag, "reaching etcd failed, retrying: attempt=%d retry_in=%s error='%s'",
			attempt, wait.Round(time.Millisecond), last.Err)
		l.Status.Retrying(last.Error())
		select {
		case <-ctx.Done():
			return discovery{}, deadlinePassed(last, time.Since(start))
		case <-l.Clock.After(wait):
		}
	}
}

func deadlinePassed(last *RetryError, waited time.Duration) *GiveUpError {
	return &GiveUpError{Step: "reaching etcd", Err: bosherr.WrapErrorf(last.Err,
		"The startup deadline passed after %d attempts over %s; the last one failed", last.Attempt, waited.Round(time.Millisecond))}
}

// attempt makes one pass from the alias to the network config. A *RetryError may pass on a later attempt;
// a *GiveUpError will not.
func (l Launcher) attempt(ctx context.Context, cluster *members.Cluster, n int) (discovery, error) {
	backoff := l.backoff()
	ips, err := l.Resolver.WaitForAnswer(ctx, l.Config.Etcd.Alias, backoff, l.Logger, func(err error) { l.Status.Retrying(err.Error()) })
	if err != nil {
		return discovery{}, &GiveUpError{Step: "resolving the alias", Err: err}
	}
	ctx, cancel := context.WithTimeout(ctx, members.RequestTimeout)
	defer cancel()
	pass := cluster.NewPass()
	defer pass.Close()
	// A certificate that does not verify is retried too, until the startup deadline: the job keeps running, so
	// post-start reports the reason, and while credentials rotate, etcd's certificate and the CA this VM has
	// may disagree for as long as the roll takes.
	if _, err := pass.CheckServerCerts(ctx, ips); err != nil {
		return discovery{}, &RetryError{Attempt: n, Err: err}
	}
	found, err := l.membersAndNetwork(ctx, pass)
	if err != nil {
		return discovery{}, &RetryError{Attempt: n, Err: err}
	}
	found.aliasIPs = ips
	return found, nil
}

// membersAndNetwork runs on the pass's connections, which are closed before flanneld starts: the member list
// and the probes first, then kubo's leases are imported (their versions tell whether etcd can serve v2), so that
// no launcher starts flanneld on a network config before they are in v3, then the network config.
func (l Launcher) membersAndNetwork(ctx context.Context, pass *members.Pass) (discovery, error) {
	list, err := pass.Members(ctx)
	if err != nil {
		return discovery{}, err
	}
	client, err := pass.Client()
	if err != nil {
		return discovery{}, err
	}
	if err := l.importV2(ctx, pass, client, list); err != nil {
		return discovery{}, err
	}
	network := l.Config.Network
	enforce := netconfig.Enforcement{On: network.Enforce, Record: netconfig.Record{Path: network.EnforceRecord}}
	result, err := netconfig.Ensure(ctx, client, l.Config.Etcd.NetworkConfigKey(), network.Desired(), enforce, l.Logger)
	if err != nil {
		return discovery{}, bosherr.WrapError(err, "Ensuring the network config")
	}
	l.keepVTEP(ctx, client)
	found := discovery{memberURLs: members.HealthyURLs(list)}
	if len(found.memberURLs) == 0 {
		l.Logger.Warn(logTag, "no member is healthy from here, flanneld gets the alias only: members=%d", len(list))
	}
	// A stored config that does not read as a pod network is flanneld's to refuse, in its own words.
	found.pod, _ = netconfig.PodNetworkOf(result.Effective())
	return found, nil
}

// backoff doubles from timing.backoff_initial up to timing.backoff_max, jittered, for DNS and etcd alike.
func (l Launcher) backoff() resolve.Backoff {
	return resolve.Backoff{Initial: l.Config.Timing.BackoffInitial.D(), Max: l.Config.Timing.BackoffMax.D()}
}
