package finalrelease

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
	"go.yaml.in/yaml/v3"
)

// Rebuild makes the tarball of a final release as a fresh machine would: in a copy of the repository's HEAD,
// from a blobstore holding only the committed archives, with an empty ~/.bosh/cache and, as root, no network.
type Rebuild struct {
	Repo    string    // the checkout; its HEAD is copied
	Bosh    string    // the bosh CLI
	Version int       // the final release
	WorkDir string    // an empty directory for the copy, the blobstore, HOME and the tarball
	Log     io.Writer // gets bosh's output; nil discards it
}

// Rebuilt is the tarball a Rebuild made, and whether bosh ran in a network namespace of its own.
type Rebuilt struct {
	Tarball  string
	Isolated bool
}

// Run rebuilds the release.
func (r Rebuild) Run() (Rebuilt, error) {
	repo, bosh, err := r.absolutePaths()
	if err != nil {
		return Rebuilt{}, err
	}
	clone := filepath.Join(r.WorkDir, "repo")
	blobstore := filepath.Join(r.WorkDir, "blobstore")
	home := filepath.Join(r.WorkDir, "home")
	if err := copyHead(repo, clone); err != nil {
		return Rebuilt{}, err
	}
	if err := fillBlobstore(filepath.Join(clone, BlobstorePath), blobstore); err != nil {
		return Rebuilt{}, err
	}
	if err := writePrivateConfig(clone, blobstore); err != nil {
		return Rebuilt{}, err
	}
	if err := os.Mkdir(home, 0o700); err != nil {
		return Rebuilt{}, bosherr.WrapError(err, "Creating an empty HOME")
	}
	result := Rebuilt{Tarball: filepath.Join(r.WorkDir, fmt.Sprintf("flannel-dns-%d.tgz", r.Version))}
	var cmd *exec.Cmd
	cmd, result.Isolated = offlineCommand(bosh, "create-release", ManifestPath(r.Version), "--tarball="+result.Tarball)
	cmd.Dir = clone
	cmd.Env = append(withoutVar(os.Environ(), "HOME"), "HOME="+home)
	if err := runLogged(cmd, r.Log); err != nil {
		return Rebuilt{}, bosherr.WrapErrorf(err, "bosh create-release %s in a copy of HEAD", ManifestPath(r.Version))
	}
	return result, nil
}

func (r Rebuild) absolutePaths() (repo, bosh string, err error) {
	repo, err = filepath.Abs(r.Repo)
	if err != nil {
		return "", "", bosherr.WrapError(err, "Resolving the repository's path")
	}
	bosh = r.Bosh
	if strings.ContainsRune(bosh, filepath.Separator) {
		if bosh, err = filepath.Abs(bosh); err != nil {
			return "", "", bosherr.WrapError(err, "Resolving the bosh CLI's path")
		}
	}
	return repo, bosh, nil
}

// copyHead fetches only HEAD's commit, so that nothing uncommitted in the checkout reaches the copy.
func copyHead(repo, dst string) error {
	for _, args := range [][]string{
		{"init", "--quiet", dst},
		{"-C", dst, "fetch", "--quiet", "--depth=1", repo, "HEAD"},
		{"-C", dst, "checkout", "--quiet", "--detach", "FETCH_HEAD"},
	} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			return bosherr.WrapErrorf(err, "git %s: %s", strings.Join(args, " "), strings.TrimSpace(string(out)))
		}
	}
	return nil
}

func fillBlobstore(committed, blobstore string) error {
	entries, err := os.ReadDir(committed)
	if err != nil {
		return bosherr.WrapError(err, "Reading the committed archives")
	}
	if err := os.Mkdir(blobstore, 0o700); err != nil {
		return bosherr.WrapError(err, "Creating the blobstore")
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(committed, e.Name()))
		if err != nil {
			return bosherr.WrapErrorf(err, "Reading %s/%s", BlobstorePath, e.Name())
		}
		if err := os.WriteFile(filepath.Join(blobstore, e.Name()), data, 0o600); err != nil {
			return bosherr.WrapErrorf(err, "Copying %s/%s", BlobstorePath, e.Name())
		}
	}
	return nil
}

// writePrivateConfig points the copy's final blobstore at dir; bosh merges config/private.yml over final.yml.
func writePrivateConfig(clone, dir string) error {
	config := map[string]any{"blobstore": map[string]any{"options": map[string]any{"blobstore_path": dir}}}
	data, err := yaml.Marshal(config)
	if err != nil {
		return bosherr.WrapError(err, "Marshalling config/private.yml")
	}
	if err := os.WriteFile(filepath.Join(clone, "config", "private.yml"), data, 0o600); err != nil {
		return bosherr.WrapError(err, "Writing config/private.yml")
	}
	return nil
}

// offlineCommand runs name in a network namespace of its own when it can (as root, with unshare), as
// scripts/test-release compiles packages; it says whether it does.
func offlineCommand(name string, args ...string) (*exec.Cmd, bool) {
	if os.Geteuid() == 0 && exec.Command("unshare", "--net", "true").Run() == nil {
		return exec.Command("unshare", append([]string{"--net", name}, args...)...), true
	}
	return exec.Command(name, args...), false
}

func withoutVar(env []string, name string) []string {
	var kept []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, name+"=") {
			kept = append(kept, kv)
		}
	}
	return kept
}

// runLogged runs cmd with its output going to log; a failure's error carries the output's last line.
func runLogged(cmd *exec.Cmd, log io.Writer) error {
	if log == nil {
		log = io.Discard
	}
	var out bytes.Buffer
	cmd.Stdout = io.MultiWriter(&out, log)
	cmd.Stderr = cmd.Stdout
	if err := cmd.Run(); err != nil {
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		return bosherr.WrapErrorf(err, "%s", strings.TrimSpace(lines[len(lines)-1]))
	}
	return nil
}
