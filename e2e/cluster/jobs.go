package cluster

import (
	"path/filepath"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
	boshlog "github.com/cloudfoundry/bosh-utils/logger"

	"github.com/flannel-dns/flannel-dns/e2e/director"
	"github.com/flannel-dns/flannel-dns/jobrender"
)

// jobs renders jobs found under a release's jobs/ directory with jobrender, each with its manifest
// properties, and the links the director would hand it.
type jobs struct {
	renderer   jobrender.Renderer
	loaded     map[string]jobrender.Job
	properties map[string]map[string]interface{}
	links      func() map[string]interface{}
	deployment string
	gateway    string
}

func newJobs(dir string, names []string, properties map[string]map[string]interface{}, links func() map[string]interface{}) (*jobs, error) {
	js := &jobs{renderer: jobrender.NewRenderer(boshlog.NewLogger(boshlog.LevelNone)), loaded: map[string]jobrender.Job{},
		properties: properties, links: links, deployment: Deployment, gateway: gateway.Addr().String()}
	for _, name := range names {
		job, err := jobrender.LoadJob(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		js.loaded[name] = job
	}
	return js, nil
}

// Render renders job for inst.
func (js *jobs) Render(name string, inst director.Instance) (director.Files, error) {
	job, ok := js.loaded[name]
	if !ok {
		return nil, bosherr.Errorf("Job '%s' is not loaded", name)
	}
	instance := jobrender.Instance{Group: inst.Group, ID: inst.ID, Index: inst.Index, AZ: "z1",
		Address: inst.Address, Deployment: js.deployment, Bootstrap: inst.Bootstrap,
		Networks: map[string]jobrender.Network{NetworkName: {IP: inst.Address, Netmask: "255.255.255.0", Gateway: js.gateway}}}
	if js.links != nil {
		instance.Links = js.links()
	}
	rendered, err := js.renderer.Render(job, js.properties[name], instance)
	if err != nil {
		return nil, err
	}
	return rendered.Files, nil
}
