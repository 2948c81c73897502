// Package templates renders jobs for an instance with the BOSH director's own template evaluation:
// bosh-common's EvaluationContext (with link() and if_link) and its property binding, run by system ruby
// from a copy of the director's library (scripts/build-thirdparty unpacks it into the cache). The bosh CLI's
// renderer (src/jobrender) has no link(); this one renders every job as the director would, links included.
package templates

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"

	"github.com/flannel-dns/flannel-dns/src/jobrender"
)

//go:embed render.rb
var script string

// Renderer runs the director's evaluation code found under Lib (bosh-common's lib directory).
type Renderer struct {
	Lib  string
	Ruby string // defaults to "ruby" from PATH
}

// Instance is what the director tells a job's templates about the instance they render for.
type Instance struct {
	Deployment string
	Group      string
	Index      int
	ID         string
	AZ         string
	Bootstrap  bool
	// Address is spec.address: the instance's BOSH DNS name when the manifest uses DNS addresses, else its IP.
	Address string
	IP      string
	Network Network
	// PersistentDisk is the size of the instance's persistent disk in MiB, 0 for none.
	PersistentDisk int
}

// Network is the instance's one network as spec.networks shows it.
type Network struct {
	Name, Netmask, Gateway string
}

// Job is one job to render: its spec, its release, the manifest's properties for it (before defaults) and
// the links the director resolved for it (spec.links: link name -> link spec).
type Job struct {
	Spec       jobrender.Job
	Release    Release
	Properties map[string]any
	Links      map[string]any
}

// Release names the job's release as spec.release shows it.
type Release struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Render renders every template and the monit file of each job for inst, in one ruby process. The files of
// a job map its destination paths (jobrender.MonitPath for the monit file) to their content.
func (r Renderer) Render(inst Instance, jobs []Job) ([]map[string][]byte, error) {
	request, err := r.request(inst, jobs)
	if err != nil {
		return nil, err
	}
	answer, err := r.run(request)
	if err != nil {
		return nil, err
	}
	rendered := make([]map[string][]byte, len(jobs))
	for i, job := range answer.Jobs {
		if job.Error != "" {
			return nil, bosherr.Errorf("Rendering %s/%d: %s", inst.Group, inst.Index, job.Error)
		}
		rendered[i] = map[string][]byte{}
		for dst, content := range job.Files {
			rendered[i][dst] = []byte(content)
		}
	}
	return rendered, nil
}

type request struct {
	Jobs []jobRequest `json:"jobs"`
}

type jobRequest struct {
	Name         string            `json:"name"`
	Dir          string            `json:"dir"`
	Templates    map[string]string `json:"templates"`
	PropertyDefs map[string]any    `json:"property_defs"`
	Properties   map[string]any    `json:"properties"`
	Spec         map[string]any    `json:"spec"`
}

type answer struct {
	Jobs []struct {
		Name  string            `json:"name"`
		Files map[string]string `json:"files"`
		Error string            `json:"error"`
	} `json:"jobs"`
}

func (r Renderer) request(inst Instance, jobs []Job) (request, error) {
	var req request
	for _, job := range jobs {
		defs := map[string]any{}
		for name, p := range job.Spec.Properties {
			defs[name] = p.Default
		}
		props := job.Properties
		if props == nil {
			props = map[string]any{}
		}
		spec := templateSpec(inst)
		spec["release"] = job.Release
		spec["links"] = orEmpty(job.Links)
		req.Jobs = append(req.Jobs, jobRequest{Name: job.Spec.Name, Dir: job.Spec.Dir, Templates: job.Spec.Templates,
			PropertyDefs: defs, Properties: props, Spec: spec})
	}
	return req, nil
}

// templateSpec is the director's template spec of an instance (InstanceSpec#as_template_spec), without the
// properties and links, which are the job's own.
func templateSpec(inst Instance) map[string]any {
	network := map[string]any{"ip": inst.IP, "netmask": inst.Network.Netmask, "gateway": inst.Network.Gateway,
		"default": []string{"dns", "gateway"}, "type": "manual",
		"dns_record_name": dnsRecordName(inst)}
	return map[string]any{
		"deployment": inst.Deployment, "job": map[string]any{"name": inst.Group}, "index": inst.Index,
		"bootstrap": inst.Bootstrap, "name": inst.Group, "id": inst.ID, "az": inst.AZ,
		"networks": map[string]any{inst.Network.Name: network}, "properties_need_filtering": true,
		"dns_domain_name": "bosh", "persistent_disk": inst.PersistentDisk, "address": inst.Address, "ip": inst.IP,
	}
}

// dnsRecordName is the director's old-style record name of an instance on its network.
func dnsRecordName(inst Instance) string {
	dash := func(s string) string { return strings.ToLower(strings.ReplaceAll(s, "_", "-")) }
	return strings.Join([]string{strings.ToLower(inst.ID), dash(inst.Group), dash(inst.Network.Name),
		dash(inst.Deployment), "bosh"}, ".")
}

func (r Renderer) run(req request) (answer, error) {
	dir, err := os.MkdirTemp("", "director-templates-")
	if err != nil {
		return answer{}, bosherr.WrapError(err, "Creating a directory for the render request")
	}
	defer os.RemoveAll(dir)
	data, err := json.Marshal(req)
	if err != nil {
		return answer{}, bosherr.WrapError(err, "Encoding the render request")
	}
	path := filepath.Join(dir, "request.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return answer{}, bosherr.WrapError(err, "Writing the render request")
	}
	ruby := r.Ruby
	if ruby == "" {
		ruby = "ruby"
	}
	cmd := exec.Command(ruby, "-e", script, r.Lib, path)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return answer{}, bosherr.WrapErrorf(err, "Running the director's template code (%s): %s", r.Lib, strings.TrimSpace(stderr.String()))
	}
	var a answer
	if err := json.Unmarshal(stdout.Bytes(), &a); err != nil {
		return answer{}, bosherr.WrapErrorf(err, "Reading what the director's template code rendered: %s", stderr.String())
	}
	if len(a.Jobs) != len(req.Jobs) {
		return answer{}, bosherr.Errorf("The director's template code rendered %d jobs of %d", len(a.Jobs), len(req.Jobs))
	}
	return a, nil
}

func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}
