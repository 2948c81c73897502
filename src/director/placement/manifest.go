package placement

// The parts of a deployment manifest and of a runtime config that decide which jobs land on an instance group.
// Keys the director does not read are ignored, as it ignores them (kubo-deployment v0.21's `stemcells:`
// include key, for one, filters nothing).

type manifest struct {
	Name           string          `yaml:"name"`
	Properties     map[string]any  `yaml:"properties"`
	Stemcells      []stemcell      `yaml:"stemcells"`
	InstanceGroups []instanceGroup `yaml:"instance_groups"`
	Addons         []addon         `yaml:"addons"`
}

type runtimeConfig struct {
	Addons []addon `yaml:"addons"`
}

type stemcell struct {
	Alias string `yaml:"alias"`
	OS    string `yaml:"os"`
}

type instanceGroup struct {
	Name      string `yaml:"name"`
	Instances int    `yaml:"instances"`
	Lifecycle string `yaml:"lifecycle"`
	// PersistentDisk is the disk's size in MiB; PersistentDiskType names a disk type of the cloud config.
	PersistentDisk     int            `yaml:"persistent_disk"`
	PersistentDiskType string         `yaml:"persistent_disk_type"`
	AZs                []string       `yaml:"azs"`
	Networks           []network      `yaml:"networks"`
	Stemcell           string         `yaml:"stemcell"`
	Jobs               []job          `yaml:"jobs"`
	Properties         map[string]any `yaml:"properties"`
}

type network struct {
	Name string `yaml:"name"`
}

type job struct {
	Name       string         `yaml:"name"`
	Release    string         `yaml:"release"`
	Properties map[string]any `yaml:"properties"`
}

type addon struct {
	Name       string         `yaml:"name"`
	Jobs       []job          `yaml:"jobs"`
	Properties map[string]any `yaml:"properties"`
	Include    filter         `yaml:"include"`
	Exclude    filter         `yaml:"exclude"`
}

type filter struct {
	Jobs        []jobRef     `yaml:"jobs"`
	Deployments []string     `yaml:"deployments"`
	Stemcell    []stemcellOS `yaml:"stemcell"`
	Networks    []string     `yaml:"networks"`
	Teams       []string     `yaml:"teams"`
	AZs         []string     `yaml:"azs"`
	Lifecycle   string       `yaml:"lifecycle"`
}

type jobRef struct {
	Name    string `yaml:"name"`
	Release string `yaml:"release"`
}

type stemcellOS struct {
	OS string `yaml:"os"`
}
