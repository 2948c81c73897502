package impact

import (
	"io"
	"os"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
	boshlog "github.com/cloudfoundry/bosh-utils/logger"

	"github.com/flannel-dns/flannel-dns/src/director/placement"
	"github.com/flannel-dns/flannel-dns/src/jobrender"
	"github.com/flannel-dns/flannel-dns/src/restart-impact/standin"
)

// Options are what restart-impact is given.
type Options struct {
	// Old and New are the paths of the deployed and the next manifest.
	Old, New string
	// ReleaseDir holds this release's jobs/.
	ReleaseDir string
	// Bosh is the bosh CLI, for stand-in credentials.
	Bosh           string
	RuntimeConfigs []string
	Teams          []string
	Logger         boshlog.Logger
}

// Run compares the manifests at opts.Old and opts.New, writes the report to out and returns whether any existing
// instance would be updated.
func Run(opts Options, out io.Writer) (bool, error) {
	raws, err := readAll("manifest", opts.Old, opts.New)
	if err != nil {
		return false, err
	}
	rcs, err := readAll("runtime config", opts.RuntimeConfigs...)
	if err != nil {
		return false, err
	}
	uses, err := variableUse(raws[0], raws[1])
	if err != nil {
		return false, err
	}
	old, new, err := placeFilled(opts, raws, rcs)
	if err != nil {
		return false, err
	}
	jobs := NewJobs(opts.ReleaseDir, jobrender.NewRenderer(opts.Logger))
	groups, err := Compare(old, new, jobs.Render, uses)
	if err != nil {
		return false, err
	}
	return Write(out, groups)
}

func readAll(kind string, paths ...string) ([][]byte, error) {
	var raws [][]byte
	for _, path := range paths {
		raw, err := os.ReadFile(path)
		if err != nil {
			return nil, bosherr.WrapErrorf(err, "Reading %s '%s'", kind, path)
		}
		raws = append(raws, raw)
	}
	return raws, nil
}

// variableUse maps the new manifest's groups to the variables with changed definitions that they use; it reads
// the manifests before stand-in credentials replace the references.
func variableUse(old, new []byte) (map[string][]string, error) {
	changed, err := ChangedVariables(old, new)
	if err != nil {
		return nil, err
	}
	d, err := placement.Place(placement.Input{Manifest: new})
	if err != nil {
		return nil, bosherr.WrapError(err, "New manifest")
	}
	return VariableUse(d, changed), nil
}

// placeFilled places both manifests after filling this release's credentials with stand-ins they share.
func placeFilled(opts Options, raws, runtimeConfigs [][]byte) (placement.Deployment, placement.Deployment, error) {
	store, err := standin.NewStore(opts.Bosh)
	if err != nil {
		return placement.Deployment{}, placement.Deployment{}, err
	}
	defer store.Close()
	filled, err := store.Fill(Release, raws...)
	if err != nil {
		return placement.Deployment{}, placement.Deployment{}, bosherr.WrapError(err, "Filling in stand-in credentials")
	}
	old, err := place(opts.Old, filled[0], runtimeConfigs, opts.Teams)
	if err != nil {
		return placement.Deployment{}, placement.Deployment{}, err
	}
	new, err := place(opts.New, filled[1], runtimeConfigs, opts.Teams)
	return old, new, err
}

func place(path string, manifest []byte, runtimeConfigs [][]byte, teams []string) (placement.Deployment, error) {
	d, err := placement.Place(placement.Input{Manifest: manifest, RuntimeConfigs: runtimeConfigs, Teams: teams})
	if err != nil {
		return placement.Deployment{}, bosherr.WrapErrorf(err, "Manifest '%s'", path)
	}
	return d, nil
}
