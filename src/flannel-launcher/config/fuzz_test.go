package config_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/config"
)

// FuzzParse feeds the loader arbitrary bytes: it must never panic, and it either returns a config that passes
// validation again or an InvalidError with at least one problem.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"etcd":{"alias":"etcd.cfcr.internal","ca_file":"/a","cert_file":"/b","key_file":"/c"},"network":{"cidr":"10.200.0.0/16"}}`))
	f.Add([]byte(`{"etcd":{"port":"x"},"timing":{"probe_timeout":"1"}}`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`{"network":null}`))
	f.Add([]byte(`{"etcd":{"alias":"e.x","prefix":"/a\u0000b","ca_file":"/a","cert_file":"/b","key_file":"/c"},` +
		`"network":{"cidr":"10.200.0.0/16"},"flanneld":{"iface":"e\u0085","path":"/f\u007f"}}`))
	f.Add([]byte(`{"etcd":{"alias":"e\n.x"}}`))
	f.Add([]byte("[\n]")) // CI's fuzz run found it: the excerpt kept the newline
	f.Add([]byte("{\"timing\": [1,\n\t2]}"))
	f.Add([]byte("{\"etcd\": \"\u2028\u0085\"}"))     // line separators that JSON lets a string hold as they are
	f.Add([]byte(`{"etcd":{"\u001b[31m":1},"\b":2}`)) // the fuzz run found keys named in problems unescaped
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := config.Parse(data)
		var invalid *config.InvalidError
		switch {
		case err == nil:
			if cfg.Etcd.Alias == "" || cfg.Etcd.Port < 1 || cfg.Etcd.Port > 65535 || cfg.Timing.BackoffMax < cfg.Timing.BackoffInitial {
				t.Fatalf("accepted an invalid config: %+v", cfg)
			}
			if slices.ContainsFunc(passedOn(cfg), func(s string) bool { return strings.ContainsFunc(s, unicode.IsControl) }) {
				t.Fatalf("accepted a control character in a value that flanneld gets or a path: %+v", cfg)
			}
		case !errors.As(err, &invalid) || len(invalid.Problems) == 0:
			t.Fatalf("error without problems: %v", err)
		case slices.ContainsFunc(invalid.Problems, func(p string) bool { return strings.ContainsFunc(p, breaksLine) }):
			t.Fatalf("a problem of more than one line, or with a control character: %q", invalid.Problems)
		}
	})
}

// passedOn are the strings of a config that end up in flanneld's arguments or name a file.
func passedOn(cfg config.Config) []string {
	e, f := cfg.Etcd, cfg.Flanneld
	return []string{e.Prefix, e.CAFile, e.CertFile, e.KeyFile, cfg.DNS.ResolvConf, cfg.Network.EnforceRecord,
		f.Path, f.Iface, f.SubnetFile, f.PublishedSubnetFile}
}

// breaksLine: a control character (a newline, a carriage return, NEL, an escape) or a line or paragraph separator.
func breaksLine(r rune) bool {
	return unicode.IsControl(r) || r == '\u2028' || r == '\u2029'
}
