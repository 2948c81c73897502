// Package interpolate runs the bosh CLI's `bosh int` (offline) to apply ops-files to a manifest and, with a vars
// store, to put generated credentials where the config server would.
package interpolate

import (
	"github.com/flannel-dns/flannel-dns/src/testenv/cache"

	"bytes"
	"os/exec"
	"strings"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
)

// BoshPath is where scripts/build-bosh-cli puts the bosh CLI: ${FLANNEL_DNS_CACHE:-/var/cache/flannel-dns}/bin/bosh.
func BoshPath() string {
	return cache.Path("bin", "bosh")
}

// Manifest returns `bosh int manifest -o opsFiles[0] -o ...`; ((variables)) stay as they are.
func Manifest(bosh, manifest string, opsFiles ...string) ([]byte, error) {
	return run(bosh, manifest, opsFiles)
}

// WithVarsStore is Manifest with `--vars-store varsStore`: the manifest's variables are generated into the
// store when missing there and substituted. Interpolations that share a store share the credentials.
func WithVarsStore(bosh, manifest, varsStore string, opsFiles ...string) ([]byte, error) {
	return run(bosh, manifest, opsFiles, "--vars-store", varsStore)
}

func run(bosh, manifest string, opsFiles []string, extra ...string) ([]byte, error) {
	args := append([]string{"int", manifest}, extra...)
	for _, o := range opsFiles {
		args = append(args, "-o", o)
	}
	cmd := exec.Command(bosh, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, bosherr.WrapErrorf(err, "bosh int %s: %s", strings.Join(args[1:], " "), strings.TrimSpace(stderr.String()+stdout.String()))
	}
	return stdout.Bytes(), nil
}
