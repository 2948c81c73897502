package check

import (
	"context"
	"errors"
	"fmt"
	"net"

	boshlog "github.com/cloudfoundry/bosh-utils/logger"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/config"
	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/members"
	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/netconfig"
)

// Gather looks at everything `run` needs before it starts flanneld, in the same order, without writing to
// etcd. It is ready when `run` would start flanneld now and every alias address that answers presents a
// certificate that verifies. A stored network config that differs from the desired one is a warning when `run`
// would start flanneld on the stored one: network.enforce is false, or this node enforced its config before.
func Gather(ctx context.Context, cfg config.Config, resolver members.Resolver, logger boshlog.Logger) Report {
	network := cfg.Network
	report := Report{
		Alias:         Alias{Name: cfg.Etcd.Alias, Addresses: []string{}},
		ServerCerts:   []ServerCert{},
		Members:       []Member{},
		NetworkConfig: NetworkConfig{Key: cfg.Etcd.NetworkConfigKey(), State: "unknown", Desired: string(network.Desired())},
		Problems:      []string{},
		Warnings:      []string{},
	}
	report.gather(ctx, cfg, resolver, logger)
	report.Ready = len(report.Problems) == 0
	return report
}

func (r *Report) gather(ctx context.Context, cfg config.Config, resolver members.Resolver, logger boshlog.Logger) {
	ips, err := resolver.Lookup(ctx, cfg.Etcd.Alias)
	if err != nil {
		r.Alias.Error = err.Error()
		r.problem(err)
		return
	}
	for _, ip := range ips {
		r.Alias.Addresses = append(r.Alias.Addresses, ip.String())
	}
	cluster, err := members.New(cfg, resolver, logger)
	if err != nil {
		r.problem(err)
		return
	}
	cluster.WaitForAll() // the report shows every address and member, however slow
	ctx, cancel := context.WithTimeout(ctx, members.RequestTimeout)
	defer cancel()
	pass := cluster.NewPass()
	defer pass.Close()
	if !r.checkServerCerts(ctx, pass, ips) {
		return
	}
	list, err := pass.Members(ctx)
	if err != nil {
		r.problem(err)
		return
	}
	r.addMembers(list)
	client, err := pass.Client()
	if err != nil {
		r.problem(err)
		return
	}
	status, err := netconfig.Read(ctx, client, cfg.Etcd.NetworkConfigKey(), cfg.Network.Desired())
	r.addNetworkConfig(status, err, cfg.Network)
}

func (r *Report) checkServerCerts(ctx context.Context, pass *members.Pass, ips []net.IP) bool {
	certs, err := pass.CheckServerCerts(ctx, ips)
	for _, cert := range certs {
		r.ServerCerts = append(r.ServerCerts, ServerCert{
			Address: cert.Address, CoversAlias: cert.CoversAlias, NotAfter: cert.NotAfter.UTC(), Error: errorText(cert.Err),
		})
	}
	if err != nil {
		r.problem(err)
		return false
	}
	// `run` leaves out an address whose certificate does not verify when another one verified; the operator
	// still has to hear of it: it may be a member with a wrong certificate, or an impostor in the answer.
	for _, cert := range certs {
		var certErr *members.CertError
		if errors.As(cert.Err, &certErr) {
			r.problem(certErr)
		}
	}
	return true
}

func (r *Report) addMembers(list []members.Member) {
	for _, m := range list {
		r.Members = append(r.Members, Member{
			Name: m.Name, ClientURL: m.ClientURL, Resolves: m.Resolves, Healthy: m.Healthy(), Leader: m.Leader,
			Version: m.Version, RTTMillis: float64(m.RTT.Microseconds()) / 1000, Error: errorText(m.Err),
		})
	}
}

func (r *Report) addNetworkConfig(status netconfig.Status, err error, network config.Network) {
	if err != nil {
		r.NetworkConfig.Error = err.Error()
		r.problem(err)
		return
	}
	r.NetworkConfig.State = string(status.State)
	r.NetworkConfig.Existing = string(status.Existing)
	r.NetworkConfig.Differences = status.Differences
	if status.State != netconfig.Different {
		return
	}
	if !network.Enforce {
		r.Warnings = append(r.Warnings, fmt.Sprintf("the network config at '%s' differs from the desired one; "+
			"flanneld would run on the stored one (network.enforce is false)", status.Key))
		return
	}
	// What `run` decides with enforce on; see netconfig.Enforcement.
	enforcedBefore, err := netconfig.Record{Path: network.EnforceRecord}.Holds(status.Key, status.Desired)
	switch {
	case err != nil:
		r.Warnings = append(r.Warnings, fmt.Sprintf("%s; flanneld would replace the stored network config, as on a node "+
			"without a record", err))
	case enforcedBefore:
		r.Warnings = append(r.Warnings, fmt.Sprintf("the network config at '%s' differs from the desired one; "+
			"flanneld would run on the stored one: this node enforced its desired config before, so the stored one "+
			"is taken as newer (network.enforce replaces a different config once per change of the desired one)", status.Key))
	}
}

func (r *Report) problem(err error) {
	r.Problems = append(r.Problems, err.Error())
}

func errorText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
