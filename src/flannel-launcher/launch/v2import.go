package launch

import (
	"context"
	"errors"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/members"
	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/v2import"
)

// importV2 copies into v3 the leases that kubo's flanneld holds in etcd's v2 store and v3 lacks (package v2import):
// while a cluster adopts flannel-dns, nodes still on kubo's flanneld keep their leases in v2 only. It runs on
// every start, since a copy can expire in v3 while kubo's flanneld renews it in v2. A failure that may pass (etcd
// without a leader or quorum, the v2 read unanswered) fails the attempt, which is retried until the startup
// deadline: flanneld started without the leases could take a subnet a kubo node still holds. Any other failure (a
// v2 store that holds no usable data, a network config that does not fit) is one log line, and flanneld starts.
//
// etcd 3.6 removed the v2 API: when every member that answered its probe runs 3.6 or later, nothing is read.
func (l Launcher) importV2(ctx context.Context, pass *members.Pass, client *clientv3.Client, list []members.Member) error {
	if !mayServeV2(list) {
		l.Logger.Debug(logTag, "the etcd members run 3.6 or later, which serve no v2 API: no leases of kubo's flanneld to import")
		return nil
	}
	httpClient := pass.HTTPClient()
	defer httpClient.CloseIdleConnections()
	prefix := l.Config.Etcd.Prefix
	data, err := v2import.Read(ctx, httpClient, l.Config.AliasURL(), prefix)
	if err == nil {
		_, err = v2import.Import(ctx, client, prefix, l.Config.Network.Desired(), data, l.Logger)
	}
	var transient *v2import.TransientError
	switch {
	case errors.Is(err, v2import.ErrNotServed):
		l.Logger.Debug(logTag, "etcd serves no v2 API: no leases of kubo's flanneld to import")
	case errors.As(err, &transient):
		return bosherr.WrapError(err, "Importing the leases of kubo's flanneld from etcd's v2 store before flanneld starts")
	case err != nil:
		l.Logger.Warn(logTag, "Not importing the leases of kubo's flanneld from etcd's v2 store; flanneld starts without them: %s", err)
	}
	return nil
}

// mayServeV2 tells whether a member that answered may serve the v2 API; when none answered, one may.
func mayServeV2(list []members.Member) bool {
	answered := 0
	for _, m := range list {
		if m.Answered {
			answered++
			if v2import.Served(m.Version) {
				return true
			}
		}
	}
	return answered == 0
}
