package jobrender

import "encoding/json"

// Instance is what the director knows about the instance a job is rendered for.
type Instance struct {
	Group      string // instance group name
	ID         string
	Index      int
	AZ         string
	Address    string
	Deployment string
	Bootstrap  bool
	Networks   map[string]Network
	// Links is put where the director puts link data (spec.links). This release's templates must not read
	// it; tests fill it with data that varies to prove they don't.
	Links map[string]interface{}
}

// Network is one entry of spec.networks.
type Network struct {
	IP      string `json:"ip"`
	Netmask string `json:"netmask"`
	Gateway string `json:"gateway"`
}

// context is the JSON the ERB renderer reads: the shape of bosh-cli's templatescompiler.RootContext (whose
// job and network types are unexported, hence this mirror) plus the director's "name" and "links".
type context struct {
	Index             int                    `json:"index"`
	ID                string                 `json:"id"`
	AZ                string                 `json:"az"`
	Bootstrap         bool                   `json:"bootstrap"`
	Job               jobName                `json:"job"`
	Deployment        string                 `json:"deployment"`
	Address           string                 `json:"address,omitempty"`
	Networks          map[string]Network     `json:"networks"`
	GlobalProperties  map[string]interface{} `json:"global_properties"`
	ClusterProperties map[string]interface{} `json:"cluster_properties"`
	JobProperties     map[string]interface{} `json:"job_properties"`
	DefaultProperties map[string]interface{} `json:"default_properties"`
	Name              string                 `json:"name"`
	Links             map[string]interface{} `json:"links"`
}

type jobName struct {
	Name string `json:"name"`
}

func newContext(job Job, properties map[string]interface{}, instance Instance) context {
	if properties == nil {
		// A nil job_properties makes the renderer fall back to global/cluster properties.
		properties = map[string]interface{}{}
	}
	return context{
		Index:             instance.Index,
		ID:                instance.ID,
		AZ:                instance.AZ,
		Bootstrap:         instance.Bootstrap,
		Job:               jobName{Name: job.Name},
		Deployment:        instance.Deployment,
		Address:           instance.Address,
		Networks:          instance.Networks,
		GlobalProperties:  map[string]interface{}{},
		ClusterProperties: map[string]interface{}{},
		JobProperties:     properties,
		DefaultProperties: job.defaults(),
		Name:              instance.Group,
		Links:             instance.Links,
	}
}

// MarshalJSON makes context an erbrenderer.TemplateEvaluationContext.
func (c context) MarshalJSON() ([]byte, error) {
	type plain context
	return json.Marshal(plain(c))
}
