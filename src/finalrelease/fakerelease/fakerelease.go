// Package fakerelease writes crafted flannel-dns repositories, release tarballs and a stand-in bosh CLI, for the
// tests of finalrelease and check-final-release.
package fakerelease

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
	"go.yaml.in/yaml/v3"
)

// Release is a release's version, the commit it was cut from, and the fingerprints of its jobs and packages
// by name.
type Release struct {
	Version    int
	CommitHash string
	Jobs       map[string]string
	Packages   map[string]string
}

// Release1 is shaped like flannel-dns's final release 1: its commit, jobs and packages, with shortened
// fingerprints.
func Release1() Release {
	return Release{
		Version:    1,
		CommitHash: "3b53ee1",
		Jobs:       map[string]string{"cfcr-dns-aliases": "99e98308", "flanneld": "6c603a85"},
		Packages:   map[string]string{"flannel": "d765a76e", "flannel-launcher": "4400d1d5", "golang-1-linux": "d59501ed"},
	}
}

// archive is a job or package archive: its path in a tarball and bytes that stand for it, which depend on its
// fingerprint.
type archive struct {
	kind, name, fingerprint string
}

func (a archive) path() string { return a.kind + "s/" + a.name + ".tgz" }
func (a archive) content() []byte {
	return fmt.Appendf(nil, "%s %s %s\n", a.kind, a.name, a.fingerprint)
}

func (a archive) digest() string {
	sum := sha256.Sum256(a.content())
	return "sha256:" + hex.EncodeToString(sum[:])
}

func (r Release) archives() []archive {
	var all []archive
	for _, name := range slices.Sorted(maps.Keys(r.Jobs)) {
		all = append(all, archive{"job", name, r.Jobs[name]})
	}
	for _, name := range slices.Sorted(maps.Keys(r.Packages)) {
		all = append(all, archive{"package", name, r.Packages[name]})
	}
	return all
}

// Manifest is the release manifest, as bosh writes flannel-dns-N.yml and release.MF.
func (r Release) Manifest() []byte {
	entries := map[string][]map[string]string{}
	for _, a := range r.archives() {
		entries[a.kind+"s"] = append(entries[a.kind+"s"], map[string]string{
			"name": a.name, "version": a.fingerprint, "fingerprint": a.fingerprint, "sha1": a.digest(),
		})
	}
	data, err := yaml.Marshal(map[string]any{
		"name": "flannel-dns", "version": fmt.Sprint(r.Version), "commit_hash": r.CommitHash,
		"uncommitted_changes": false, "jobs": entries["jobs"], "packages": entries["packages"],
	})
	if err != nil {
		panic(err) // maps of strings always marshal
	}
	return data
}

// WriteTarball writes the release's tarball; the archives at the paths in tampered ("packages/flannel.tgz")
// get other bytes than their digest in the manifest.
func (r Release) WriteTarball(file string, tampered ...string) error {
	f, err := os.Create(file)
	if err != nil {
		return bosherr.WrapError(err, "Creating the tarball")
	}
	defer f.Close()
	gz := gzip.NewWriter(f)
	tw := tar.NewWriter(gz)
	if err := addFile(tw, "./release.MF", r.Manifest()); err != nil {
		return err
	}
	for _, a := range r.archives() {
		content := a.content()
		if slices.Contains(tampered, a.path()) {
			content = append(content, "tampered\n"...)
		}
		if err := addFile(tw, "./"+a.path(), content); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return bosherr.WrapError(err, "Closing the tarball")
	}
	return gz.Close()
}

func addFile(tw *tar.Writer, name string, content []byte) error {
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(content))}); err != nil {
		return bosherr.WrapErrorf(err, "Adding %s", name)
	}
	_, err := tw.Write(content)
	return err
}

// WriteRepo makes dir a git repository with one commit holding what a flannel-dns release repository holds of
// its final releases: config/final.yml, releases/flannel-dns/index.yml, each release's manifest, the archives in
// releases/flannel-dns/blobstore/, and the given README.md.
func WriteRepo(dir, readme string, releases ...Release) error {
	files := map[string][]byte{
		"README.md":        []byte(readme),
		"config/final.yml": []byte("name: flannel-dns\nblobstore:\n  provider: local\n  options:\n    blobstore_path: /nonexistent\n"),
	}
	builds := map[string]map[string]string{}
	for _, r := range releases {
		builds[fmt.Sprintf("build-%d", r.Version)] = map[string]string{"version": fmt.Sprint(r.Version)}
		files[fmt.Sprintf("releases/flannel-dns/flannel-dns-%d.yml", r.Version)] = r.Manifest()
		for _, a := range r.archives() {
			files["releases/flannel-dns/blobstore/"+a.digest()[len("sha256:"):]] = a.content()
		}
	}
	index, err := yaml.Marshal(map[string]any{"builds": builds, "format-version": "2"})
	if err != nil {
		return bosherr.WrapError(err, "Marshalling index.yml")
	}
	files["releases/flannel-dns/index.yml"] = index
	for name, content := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			return bosherr.WrapErrorf(err, "Creating the directory of %s", name)
		}
		if err := os.WriteFile(filepath.Join(dir, name), content, 0o644); err != nil {
			return bosherr.WrapErrorf(err, "Writing %s", name)
		}
	}
	return commit(dir)
}

func commit(dir string) error {
	for _, args := range [][]string{
		{"init", "--quiet"},
		{"add", "."},
		{"-c", "user.name=test", "-c", "user.email=test@example.com", "commit", "--quiet", "-m", "fixture"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			return bosherr.WrapErrorf(err, "git %v: %s", args, out)
		}
	}
	return nil
}

// boshScript stands in for `bosh create-release MANIFEST --tarball=PATH`. It fails unless it runs where a
// rebuild from the committed archives alone must run: in a copy of the repository's HEAD that has MANIFEST and
// no file named "uncommitted", with an empty HOME and config/private.yml pointing at a blobstore holding the
// committed archives and nothing else. It writes the interfaces it sees, loopback aside, to INTERFACES, then
// copies TARBALL to PATH.
const boshScript = `#!/bin/sh
set -eu
[ "$1" = create-release ] || { echo "unexpected arguments: $*"; exit 1; }
[ -f "$2" ] || { echo "no $2 in $(pwd)"; exit 1; }
[ ! -e uncommitted ] || { echo "an uncommitted file reached the copy"; exit 1; }
[ -z "$(ls -A "$HOME")" ] || { echo "HOME $HOME is not empty"; exit 1; }
blobstore=$(sed -n 's/^ *blobstore_path: *//p' config/private.yml)
[ "$(ls "$blobstore")" = "$(ls releases/flannel-dns/blobstore)" ] || { echo "blobstore $blobstore differs"; exit 1; }
awk 'NR > 2 && $1 != "lo:" { print $1 }' /proc/net/dev > %[1]q
cp %[2]q "${3#--tarball=}"
`

// WriteBosh writes the stand-in bosh CLI (boshScript) into dir and returns its path; the interfaces it saw
// are written to dir/interfaces.
func WriteBosh(dir, tarball string) (string, error) {
	path := filepath.Join(dir, "bosh")
	script := fmt.Sprintf(boshScript, filepath.Join(dir, "interfaces"), tarball)
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		return "", bosherr.WrapError(err, "Writing the stand-in bosh CLI")
	}
	return path, nil
}
