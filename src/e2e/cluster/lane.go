package cluster

import (
	"os"
	"path/filepath"
	"sort"
	"strings"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"

	"github.com/flannel-dns/flannel-dns/src/e2e/manifest"
)

// Lane is one CFCR manifest with the releases at the versions it runs: what a cluster of that generation is.
type Lane struct {
	Name string
	// Fixture is the upstream manifest under ../shared/fixtures; Companion is flannel-dns's certificate
	// ops-file for it.
	Fixture, Companion string
	// EtcdCertificate is the variable of etcd's server certificate in the manifest.
	EtcdCertificate string
	// DNSRuntimeConfig: bosh-dns comes from the director's runtime config (runtime-config-dns.yml beside
	// simulated.yml), not from the manifest.
	DNSRuntimeConfig bool
	// KeyUsage: the manifest asks for certificate options the bosh CLI cannot generate
	// (bosh-cli-credentials.yml beside simulated.yml drops them).
	KeyUsage bool
	// Release versions: bpm and bosh-dns as the manifest (or its era's runtime config) names them, cfcr-etcd,
	// kubo and docker as it pins them, and the etcd that cfcr-etcd's package ships.
	BPM, BoshDNS, CfcrEtcd, Kubo, Docker, Etcd string
	// Stemcell is the stemcell line of the lane's VMs (src/e2e/stemcell): the seed deployment's xenial 97.x
	// for v0.21, xenial 315.x for v0.32, its era's, and jammy for current.
	Stemcell string
	// CNI is what kubelet's `cni` package holds: containernetworking/plugins "0.7.1", as kubo's package ships
	// (scripts/build-cni-v0.7), or "current" (scripts/build-cni: flannel from 0.8.6, the others from 1.10.0).
	CNI string
}

// Lanes are the generations the simulated cluster runs: kubo-deployment v0.21 and v0.32 with what they pin
// (v0.32 takes bosh-dns from bosh-deployment's runtime config of its time), and v0.21's manifest on a director
// whose runtime config was kept current.
var Lanes = map[string]Lane{
	"v0.21": {Name: "v0.21", Fixture: "cfcr-v0.21.0.yml", Companion: "flannel-dns-tls-etcd-v0-17-0.yml", EtcdCertificate: "tls-etcd-v0-17-0",
		BPM: "0.12.2", BoshDNS: "1.8.0", CfcrEtcd: "1.4.0", Kubo: "0.21.0", Docker: "32.0.0", Etcd: "3.3.8", CNI: "0.7.1", Stemcell: "ubuntu-xenial-97.x"},
	"v0.32": {Name: "v0.32", Fixture: "cfcr-v0.32.0.yml", Companion: "flannel-dns-tls-etcd-v0-29-0.yml", EtcdCertificate: "tls-etcd-v0-29-0", DNSRuntimeConfig: true, KeyUsage: true,
		BPM: "1.0.4", BoshDNS: "1.11.0", CfcrEtcd: "1.11.1", Kubo: "0.32.0", Docker: "35.2.1", Etcd: "3.3.12", CNI: "0.7.1", Stemcell: "ubuntu-xenial-315.x"},
	"current": {Name: "current", Fixture: "cfcr-v0.21.0.yml", Companion: "flannel-dns-tls-etcd-v0-17-0.yml", EtcdCertificate: "tls-etcd-v0-17-0",
		BPM: "1.4.38", BoshDNS: "1.39.28", CfcrEtcd: "1.4.0", Kubo: "0.21.0", Docker: "32.0.0", Etcd: "3.3.8", CNI: "current", Stemcell: "ubuntu-jammy"},
}

// LaneFromEnv is the lane E2E_LANE names, v0.21 when it is unset.
func LaneFromEnv() (Lane, error) {
	name := os.Getenv("E2E_LANE")
	if name == "" {
		name = "v0.21"
	}
	lane, ok := Lanes[name]
	if !ok {
		var names []string
		for n := range Lanes {
			names = append(names, n)
		}
		sort.Strings(names)
		return Lane{}, bosherr.Errorf("E2E_LANE '%s' is not one of %s", name, strings.Join(names, ", "))
	}
	return lane, nil
}

// The cache's layout (scripts/build-thirdparty, scripts/build-etcd-3.3, scripts/build-cni-v0.7): a release's
// unpacked source as <release>-<version>, its compiled packages under compiled/.
func (cfg Config) releaseDir(name, version string) string {
	return filepath.Join(cfg.Cache, name+"-"+version)
}

func (cfg Config) bpmRelease() string     { return cfg.releaseDir("bpm", cfg.Lane.BPM) }
func (cfg Config) boshDNSRelease() string { return cfg.releaseDir("bosh-dns", cfg.Lane.BoshDNS) }

// cniPackage is kubo's compiled cni package, the lane's plugins under bin/.
func (cfg Config) cniPackage() string {
	if cfg.Lane.CNI == "current" {
		return filepath.Join(cfg.Cache, "cni-plugins")
	}
	return filepath.Join(cfg.releaseDir("cni", cfg.Lane.CNI), "compiled", "cni")
}

// etcdPackage is cfcr-etcd's compiled etcd package: bin/etcd and bin/etcdctl.
func (cfg Config) etcdPackage() string {
	return filepath.Join(cfg.releaseDir("etcd", cfg.Lane.Etcd), "compiled", "etcd")
}

// source is the lane's deployment with ops-files, credentials in store.
func (cfg Config) source(store string, opsFiles ...string) manifest.Source {
	dir := filepath.Join(cfg.Repo, "src", "e2e", "manifest")
	src := manifest.Source{Bosh: cfg.bosh(), Manifest: cfg.fixture(), VarsStore: store}
	if cfg.Lane.DNSRuntimeConfig {
		src.RuntimeConfigs = []string{filepath.Join(dir, "runtime-config-dns.yml")}
	} else {
		src.OpsFiles = []string{filepath.Join(dir, "bosh-dns-names.yml")}
	}
	if cfg.Lane.KeyUsage {
		src.OpsFiles = append(src.OpsFiles, filepath.Join(dir, "bosh-cli-credentials.yml"))
	}
	src.OpsFiles = append(src.OpsFiles, opsFiles...)
	return src
}

// fixture is the lane's upstream manifest: shared/ sits beside the checkout.
func (cfg Config) fixture() string {
	return filepath.Join(cfg.Repo, "..", "shared", "fixtures", cfg.Lane.Fixture)
}
