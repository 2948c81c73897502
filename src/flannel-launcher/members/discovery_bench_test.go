package members_test

import (
	"testing"
	"time"

	boshlog "github.com/cloudfoundry/bosh-utils/logger"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/config"
	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/members"
)

// BenchmarkDiscovery times the launcher's way to the member list (resolve the alias, check the server
// certificates, list and probe the members) against a real three-member TLS cluster on loopback, with every
// member healthy and then with one that accepts connections and never answers (probe timeout 500ms).
//
//	go test ./src/flannel-launcher/members -run '^$' -bench Discovery -benchtime 20x -count 5
func BenchmarkDiscovery(b *testing.B) {
	closeEnv, err := startEnv(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer closeEnv()
	cfg := launcherConfig()
	cfg.Timing.ProbeTimeout = config.Duration(500 * time.Millisecond)
	logger := boshlog.NewLogger(boshlog.LevelNone)
	run := func(wantHealthy int) func(*testing.B) {
		return func(b *testing.B) {
			for b.Loop() {
				found, err := discoverWith(cfg, logger, false)
				if err != nil {
					b.Fatal(err)
				}
				if healthy := len(members.HealthyURLs(found.members)); healthy != wantHealthy {
					b.Fatalf("%d healthy members, want %d", healthy, wantHealthy)
				}
			}
		}
	}
	b.Run("healthy", run(3))
	if err := cluster.BlackHole(1); err != nil {
		b.Fatal(err)
	}
	b.Run("one-black-holed", run(2))
}
