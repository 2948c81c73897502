package config_test

import (
	"errors"
	"testing"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/config"
)

// FuzzParse feeds the loader arbitrary bytes: it must never panic, and it either returns a config that passes
// validation again or an InvalidError with at least one problem.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"etcd":{"alias":"etcd.cfcr.internal","ca_file":"/a","cert_file":"/b","key_file":"/c"},"network":{"cidr":"10.200.0.0/16"}}`))
	f.Add([]byte(`{"etcd":{"port":"x"},"timing":{"probe_timeout":"1"}}`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`{"network":null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := config.Parse(data)
		var invalid *config.InvalidError
		switch {
		case err == nil:
			if cfg.Etcd.Alias == "" || cfg.Etcd.Port < 1 || cfg.Etcd.Port > 65535 || cfg.Timing.BackoffMax < cfg.Timing.BackoffInitial {
				t.Fatalf("accepted an invalid config: %+v", cfg)
			}
		case !errors.As(err, &invalid) || len(invalid.Problems) == 0:
			t.Fatalf("error without problems: %v", err)
		}
	})
}
