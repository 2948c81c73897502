package jobrender

import (
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/cloudfoundry/bosh-cli/v7/templatescompiler/erbrenderer"
	bosherr "github.com/cloudfoundry/bosh-utils/errors"
	boshlog "github.com/cloudfoundry/bosh-utils/logger"
	boshsys "github.com/cloudfoundry/bosh-utils/system"
)

// MonitPath is the key of the rendered monit file in Rendered.Files.
const MonitPath = "monit"

// Renderer renders jobs with the bosh CLI's ERB renderer. It is safe for concurrent use.
type Renderer struct {
	erb erbrenderer.ERBRenderer
}

// Rendered is one job rendered for one instance.
type Rendered struct {
	// Files maps each destination path (as in the spec's templates, plus MonitPath) to its content.
	Files map[string][]byte
	// Hash changes whenever any rendered file changes, like the director's configuration hash.
	Hash string
}

// NewRenderer returns a Renderer that runs `ruby` from PATH.
func NewRenderer(logger boshlog.Logger) Renderer {
	fs := boshsys.NewOsFileSystem(logger)
	return Renderer{erb: erbrenderer.NewERBRenderer(fs, boshsys.NewExecCmdRunner(logger), logger)}
}

// Render renders every template of job, and its monit file, with the manifest's job properties for instance.
func (r Renderer) Render(job Job, properties map[string]interface{}, instance Instance) (Rendered, error) {
	dsts := append([]string{MonitPath}, slices.Sorted(maps.Values(job.Templates))...)
	files := make(map[string][]byte, len(dsts))
	for _, dst := range dsts {
		content, err := r.RenderFile(job, dst, properties, instance)
		if err != nil {
			return Rendered{}, err
		}
		files[dst] = content
	}
	return Rendered{Files: files, Hash: hash(files)}, nil
}

// RenderFile renders the one template whose destination is dst (MonitPath for the monit file).
func (r Renderer) RenderFile(job Job, dst string, properties map[string]interface{}, instance Instance) ([]byte, error) {
	src, err := job.source(dst)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "jobrender-")
	if err != nil {
		return nil, bosherr.WrapError(err, "Creating render directory")
	}
	defer os.RemoveAll(dir)

	out := filepath.Join(dir, "out")
	if err := r.erb.Render(src, out, newContext(job, properties, instance)); err != nil {
		return nil, bosherr.WrapErrorf(err, "Rendering '%s' of job '%s'", dst, job.Name)
	}
	content, err := os.ReadFile(out)
	if err != nil {
		return nil, bosherr.WrapErrorf(err, "Reading rendered '%s'", dst)
	}
	return content, nil
}

// Paths returns the destination paths in a stable order.
func (r Rendered) Paths() []string {
	return slices.Sorted(maps.Keys(r.Files))
}

// WriteTo lays the files out under dir as the agent does under /var/vcap/jobs/<job>: executables under
// bin/, everything else readable by owner and group only (the config holds key material).
func (r Rendered) WriteTo(dir string) error {
	for path, content := range r.Files {
		target := filepath.Join(dir, path)
		if err := os.MkdirAll(filepath.Dir(target), 0o750); err != nil {
			return bosherr.WrapErrorf(err, "Creating directory for '%s'", path)
		}
		mode := os.FileMode(0o640)
		if filepath.Dir(path) == "bin" {
			mode = 0o750
		}
		if err := os.WriteFile(target, content, mode); err != nil {
			return bosherr.WrapErrorf(err, "Writing '%s'", path)
		}
	}
	return nil
}

func hash(files map[string][]byte) string {
	sum := sha256.New()
	for _, path := range slices.Sorted(maps.Keys(files)) {
		content := sha256.Sum256(files[path])
		sum.Write([]byte(path))
		sum.Write([]byte{0})
		sum.Write(content[:])
	}
	return hex.EncodeToString(sum.Sum(nil))
}
