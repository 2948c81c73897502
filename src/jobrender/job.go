// Package jobrender renders the templates of one job of this release the way the BOSH director does for an
// instance, through the bosh CLI's ERB renderer (system ruby), so that tests see the bytes a VM would get.
package jobrender

import (
	"maps"
	"os"
	"path/filepath"
	"slices"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
	"go.yaml.in/yaml/v3"
)

// Job is a job directory of the release: what its spec says and where its templates are.
type Job struct {
	Dir  string
	Name string
	// Templates maps a source path under templates/ to its destination path in the rendered job.
	Templates map[string]string
	// Properties maps the spec's dotted property names to their definitions.
	Properties map[string]Property
	Packages   []string
	// Provides and Consumes are the spec's links.
	Provides []Link
	Consumes []Link
}

// Link is one link a job spec provides or consumes.
type Link struct {
	Name     string `yaml:"name"`
	Type     string `yaml:"type"`
	Optional bool   `yaml:"optional"`
	// Properties names the provider's properties that the link carries.
	Properties []string `yaml:"properties"`
}

// Property is one entry of a job spec's properties.
type Property struct {
	Description string      `yaml:"description"`
	Default     interface{} `yaml:"default"`
}

type spec struct {
	Name       string              `yaml:"name"`
	Templates  map[string]string   `yaml:"templates"`
	Packages   []string            `yaml:"packages"`
	Properties map[string]Property `yaml:"properties"`
	Provides   []Link              `yaml:"provides"`
	Consumes   []Link              `yaml:"consumes"`
}

// LoadJob reads dir/spec and checks that every template it names exists.
func LoadJob(dir string) (Job, error) {
	data, err := os.ReadFile(filepath.Join(dir, "spec"))
	if err != nil {
		return Job{}, bosherr.WrapErrorf(err, "Reading job spec in '%s'", dir)
	}
	var s spec
	if err := yaml.Unmarshal(data, &s); err != nil {
		return Job{}, bosherr.WrapErrorf(err, "Parsing job spec in '%s'", dir)
	}
	if s.Name == "" {
		return Job{}, bosherr.Errorf("Job spec in '%s' has no name", dir)
	}
	job := Job{Dir: dir, Name: s.Name, Templates: s.Templates, Properties: s.Properties, Packages: s.Packages,
		Provides: s.Provides, Consumes: s.Consumes}
	for _, src := range job.TemplateSources() {
		if _, err := os.Stat(job.templatePath(src)); err != nil {
			return Job{}, bosherr.WrapErrorf(err, "Job '%s' lists template '%s'", job.Name, src)
		}
	}
	return job, nil
}

// TemplateSources returns the spec's template source paths in a stable order.
func (j Job) TemplateSources() []string {
	return slices.Sorted(maps.Keys(j.Templates))
}

// TemplatePaths returns the file of every template, monit included, for scanning their text.
func (j Job) TemplatePaths() []string {
	paths := []string{filepath.Join(j.Dir, "monit")}
	for _, src := range j.TemplateSources() {
		paths = append(paths, j.templatePath(src))
	}
	return paths
}

// source is the template file that renders to dst.
func (j Job) source(dst string) (string, error) {
	if dst == MonitPath {
		return filepath.Join(j.Dir, "monit"), nil
	}
	for src, templateDst := range j.Templates {
		if templateDst == dst {
			return j.templatePath(src), nil
		}
	}
	return "", bosherr.Errorf("Job '%s' has no template that renders '%s'", j.Name, dst)
}

func (j Job) templatePath(src string) string {
	return filepath.Join(j.Dir, "templates", src)
}

// defaults is the context's default_properties: every spec property by its dotted name, so that p() finds
// manifest values for properties that have no default too.
func (j Job) defaults() map[string]interface{} {
	defaults := make(map[string]interface{}, len(j.Properties))
	for name, property := range j.Properties {
		defaults[name] = property.Default
	}
	return defaults
}
