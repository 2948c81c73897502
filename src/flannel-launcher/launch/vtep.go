package launch

import (
	"context"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/vtep"
)

// keepVTEP creates the vxlan device flanneld will use when it is missing (a recreated or rebooted VM), with the MAC
// this node's lease names, so that the other nodes keep reaching it: those still on kubo's flanneld read only the
// v2 store and would never learn a new MAC (package vtep). It never keeps flanneld from starting: anything wrong is
// a warning, and flanneld then makes a device of its own.
func (l Launcher) keepVTEP(ctx context.Context, kv clientv3.KV) {
	if l.Config.Network.BackendType != "vxlan" {
		return
	}
	if missing, err := vtep.Missing(l.Config.Network); !missing {
		if err != nil {
			l.Logger.Warn(logTag, "Not keeping this node's VXLAN MAC: %s", err)
		}
		return
	}
	node, err := vtep.Local(l.Config.Flanneld)
	if err != nil {
		l.Logger.Warn(logTag, "Not looking for this node's VXLAN MAC: %s", err)
		return
	}
	mac, key, err := vtep.LeaseMAC(ctx, kv, l.Config.Etcd.Prefix, node)
	if err != nil || mac == nil {
		if err != nil {
			l.Logger.Warn(logTag, "Not keeping this node's VXLAN MAC: %s", err)
		}
		return
	}
	created, err := vtep.Ensure(node, l.Config.Network, mac)
	switch {
	case err != nil:
		l.Logger.Warn(logTag, "Not keeping this node's VXLAN MAC; flanneld makes a new one: %s", err)
	case created:
		l.Logger.Info(logTag, "Created %s with MAC %s, the one its lease at '%s' names, for flanneld to take over",
			vtep.Name(l.Config.Network), mac, key)
	}
}
