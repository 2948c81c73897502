package manifests_test

import (
	"regexp"
	"slices"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"go.yaml.in/yaml/v3"

	"github.com/flannel-dns/flannel-dns/src/director/placement"
)

// view is what the checks read from an interpolated manifest: the director's placement of jobs plus the
// releases and variables.
type view struct {
	placement.Deployment
	Releases  []release  `yaml:"releases"`
	Variables []variable `yaml:"variables"`
}

type release struct {
	Name    string `yaml:"name"`
	Version string `yaml:"version"`
}

type variable struct {
	Name       string `yaml:"name"`
	Type       string `yaml:"type"`
	UpdateMode string `yaml:"update_mode"`
	Options    struct {
		IsCA             bool     `yaml:"is_ca"`
		CA               string   `yaml:"ca"`
		CommonName       string   `yaml:"common_name"`
		AlternativeNames []string `yaml:"alternative_names"`
		ExtendedKeyUsage []string `yaml:"extended_key_usage"`
	} `yaml:"options"`
}

func viewOf(manifest []byte) view {
	var v view
	Expect(yaml.Unmarshal(manifest, &v)).To(Succeed())
	d, err := placement.Place(placement.Input{Manifest: manifest})
	Expect(err).NotTo(HaveOccurred())
	v.Deployment = d
	return v
}

func (v view) variable(name string) variable {
	i := slices.IndexFunc(v.Variables, func(x variable) bool { return x.Name == name })
	Expect(i).To(BeNumerically(">=", 0), "no variable named %q", name)
	return v.Variables[i]
}

// etcdGroup is the instance group that runs cfcr-etcd's etcd.
func (v view) etcdGroup() placement.Group {
	i := slices.IndexFunc(v.Groups, func(g placement.Group) bool { return g.HasJob("etcd", "cfcr-etcd") })
	Expect(i).To(BeNumerically(">=", 0), "no instance group runs cfcr-etcd's etcd")
	return v.Groups[i]
}

// workers are the instance groups that must not change when the etcd group scales: every long-running group
// other than the etcd group.
func (v view) workers() []placement.Group {
	etcd := v.etcdGroup().Name
	var ws []placement.Group
	for _, g := range v.Groups {
		if g.Name != etcd && g.Lifecycle == "service" {
			ws = append(ws, g)
		}
	}
	Expect(ws).NotTo(BeEmpty())
	return ws
}

func job(g placement.Group, name string) placement.Job {
	j, found := g.Job(name)
	Expect(found).To(BeTrue(), "no job %q on instance group %q", name, g.Name)
	return j
}

// prop reads a nested property by its path.
func prop(props map[string]any, path ...string) any {
	var cur any = props
	for _, key := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[key]
	}
	return cur
}

var reference = regexp.MustCompile(`^\(\(([^.()]+)\.([a-z_]+)\)\)$`)

// ref splits "((name.field))" into the variable's name and the field.
func ref(value any) (string, string) {
	s, _ := value.(string)
	m := reference.FindStringSubmatch(s)
	Expect(m).NotTo(BeNil(), "%v is not a ((variable.field)) reference", value)
	return m[1], m[2]
}

// issuer is the name of the CA variable behind a reference to a CA: "((cert.ca))" is cert's CA, "((ca.certificate))"
// is the CA itself.
func (v view) issuer(value any) string {
	name, field := ref(value)
	switch field {
	case "ca":
		return v.variable(name).Options.CA
	case "certificate":
		Expect(v.variable(name).Options.IsCA).To(BeTrue(), "%s is not a CA", name)
		return name
	}
	Fail("unexpected field in " + value.(string))
	return ""
}
