// Package flanneld builds flanneld's command line, runs it, forwards stop signals to it and reports its exit
// status.
package flanneld

import (
	"strings"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/config"
)

// Args builds flanneld's flags. The alias URL comes first so that flanneld can always reach whichever members
// bosh-dns answers with, without a restart; the member URLs follow, each once. Only the options the config
// sets are passed; the rest keep flanneld's defaults. Every value is a path or an address, never a secret.
func Args(cfg config.Config, memberURLs []string) []string {
	args := []string{
		"-etcd-endpoints=" + strings.Join(endpoints(cfg.AliasURL(), memberURLs), ","),
		"-etcd-prefix=" + cfg.Etcd.Prefix,
	}
	args = appendIfSet(args, "etcd-cafile", cfg.Etcd.CAFile)
	args = appendIfSet(args, "etcd-certfile", cfg.Etcd.CertFile)
	args = appendIfSet(args, "etcd-keyfile", cfg.Etcd.KeyFile)
	args = appendIfSet(args, "iface", cfg.Flanneld.Iface)
	args = appendIfSet(args, "public-ip", cfg.Flanneld.PublicIP)
	if cfg.Flanneld.IPMasq {
		args = append(args, "-ip-masq")
	}
	return appendIfSet(args, "subnet-file", cfg.Flanneld.SubnetFile)
}

func endpoints(aliasURL string, memberURLs []string) []string {
	seen := map[string]bool{aliasURL: true}
	result := []string{aliasURL}
	for _, url := range memberURLs {
		if !seen[url] {
			seen[url] = true
			result = append(result, url)
		}
	}
	return result
}

func appendIfSet(args []string, flag, value string) []string {
	if value == "" {
		return args
	}
	return append(args, "-"+flag+"="+value)
}
