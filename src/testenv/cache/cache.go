// Package cache is where the builds outside the checkout live (scripts/setup): $FLANNEL_DNS_CACHE, or
// /var/cache/flannel-dns when it is not set. The scripts work it out the same way.
package cache

import (
	"cmp"
	"os"
	"path/filepath"
)

// Default is the cache when FLANNEL_DNS_CACHE is not set.
const Default = "/var/cache/flannel-dns"

// Dir is the cache's directory.
func Dir() string { return cmp.Or(os.Getenv("FLANNEL_DNS_CACHE"), Default) }

// Path is elem joined under the cache's directory.
func Path(elem ...string) string { return filepath.Join(append([]string{Dir()}, elem...)...) }
