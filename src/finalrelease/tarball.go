package finalrelease

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"slices"
	"strings"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
)

// Tarball is what a release tarball holds: its release.MF, and the digest ("sha256:<hex>") of each job and
// package archive, keyed by its path in the tarball ("jobs/flanneld.tgz", "packages/flannel.tgz").
type Tarball struct {
	Manifest Manifest
	Digests  map[string]string
}

// OpenTarball reads a release tarball.
func OpenTarball(file string) (Tarball, error) {
	f, err := os.Open(file)
	if err != nil {
		return Tarball{}, bosherr.WrapError(err, "Opening the release tarball")
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return Tarball{}, bosherr.WrapErrorf(err, "Reading %s", file)
	}
	t := Tarball{Digests: map[string]string{}}
	var manifest []byte
	tr := tar.NewReader(gz)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return Tarball{}, bosherr.WrapErrorf(err, "Reading %s", file)
		}
		name := path.Clean(hdr.Name)
		switch {
		case name == "release.MF":
			manifest, err = io.ReadAll(tr)
		case isArchive(name):
			t.Digests[name], err = digest(tr)
		}
		if err != nil {
			return Tarball{}, bosherr.WrapErrorf(err, "Reading %s in %s", name, file)
		}
	}
	if manifest == nil {
		return Tarball{}, bosherr.Errorf("%s has no release.MF", file)
	}
	t.Manifest, err = ParseManifest(manifest, file+": release.MF")
	return t, err
}

func isArchive(name string) bool {
	dir := path.Dir(name)
	return (dir == "jobs" || dir == "packages") && strings.HasSuffix(name, ".tgz")
}

func digest(r io.Reader) (string, error) {
	h := sha256.New()
	if _, err := io.Copy(h, r); err != nil {
		return "", err
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// VerifyArchives fails unless the tarball holds exactly the jobs and packages of m, each with the digest m
// records; source names m in the message, which lists every archive that is wrong.
func VerifyArchives(m Manifest, source string, t Tarball) error {
	want := map[string]string{}
	for _, a := range m.Jobs {
		want["jobs/"+a.Name+".tgz"] = a.SHA1
	}
	for _, a := range m.Packages {
		want["packages/"+a.Name+".tgz"] = a.SHA1
	}
	var problems []string
	for _, name := range slices.Sorted(maps.Keys(want)) {
		got, ok := t.Digests[name]
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("%s is missing", name))
		case got != want[name]:
			problems = append(problems, fmt.Sprintf("%s has %s where %s records %s", name, got, source, want[name]))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(t.Digests)) {
		if _, ok := want[name]; !ok {
			problems = append(problems, fmt.Sprintf("%s is not in %s", name, source))
		}
	}
	if len(problems) > 0 {
		return bosherr.Error(strings.Join(problems, "; "))
	}
	return nil
}
