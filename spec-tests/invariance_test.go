package spectests_test

import (
	"fmt"
	"os"
	"regexp"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"go.yaml.in/yaml/v3"

	"github.com/flannel-dns/flannel-dns/src/jobrender"
)

// What a change of the master count can change in what the director gives a template: the etcd and
// kube-apiserver links (instances, their addresses, the bootstrap one). masterLinks fills them for n masters.
func masterLinks(n int) map[string]interface{} {
	instances := make([]interface{}, n)
	for i := range instances {
		instances[i] = map[string]interface{}{
			"name": "master", "index": i, "id": fmt.Sprintf("m-%d-of-%d", i, n), "az": fmt.Sprintf("z%d", i%3+1),
			"address": fmt.Sprintf("198.51.100.%d", 10+i), "bootstrap": i == 0,
		}
	}
	link := map[string]interface{}{
		"address":    "q-s0.master.default.cfcr.bosh",
		"instances":  instances,
		"properties": map[string]interface{}{"etcd": map[string]interface{}{"dns_suffix": "etcd.cfcr.internal"}, "members": n},
	}
	return map[string]interface{}{"etcd": link, "kube-apiserver": link}
}

// master is the instance context of master i in a deployment with n masters.
func master(i, n int) jobrender.Instance {
	ip := fmt.Sprintf("198.51.100.%d", 10+i)
	return jobrender.Instance{
		Group: "master", ID: fmt.Sprintf("m-%d", i), Index: i, AZ: "z1", Address: ip, Deployment: "cfcr",
		Bootstrap: i == n-1, // where the bootstrap instance lands can move when masters come and go
		Networks:  map[string]jobrender.Network{"default": {IP: ip, Netmask: "255.255.255.0", Gateway: "198.51.100.1"}},
		Links:     masterLinks(n),
	}
}

func renderBoth(instance jobrender.Instance) [2]jobrender.Rendered {
	properties := withTLS(map[string]interface{}{"iface": "eth0"})
	var result [2]jobrender.Rendered
	for i, job := range []jobrender.Job{flanneld, aliases} {
		rendered, err := renderer.Render(job, properties, instance)
		Expect(err).NotTo(HaveOccurred())
		result[i] = rendered
	}
	return result
}

var _ = Describe("Rendering does not depend on the masters", Ordered, func() {
	counts := []int{1, 3, 5}
	workers := []int{0, 7}
	// rendered[w][n]: both jobs on worker w in a deployment with n masters.
	rendered := map[int]map[int][2]jobrender.Rendered{}

	BeforeAll(func() {
		for _, w := range workers {
			rendered[w] = map[int][2]jobrender.Rendered{}
			for _, n := range counts {
				instance := worker(w)
				instance.Links = masterLinks(n)
				rendered[w][n] = renderBoth(instance)
			}
		}
	})

	It("gives each worker byte-identical files for every master count", func() {
		for _, w := range workers {
			for _, n := range counts[1:] {
				for j := range rendered[w][n] {
					Expect(rendered[w][n][j].Files).To(Equal(rendered[w][counts[0]][j].Files), "worker %d, %d masters", w, n)
					Expect(rendered[w][n][j].Hash).To(Equal(rendered[w][counts[0]][j].Hash))
				}
			}
		}
	})

	It("gives a master the same files whether it has 2 or 4 peers, bootstrap or not", func() {
		three := renderBoth(master(1, 3))
		five := renderBoth(master(1, 5))
		Expect(five[0].Hash).To(Equal(three[0].Hash))
		Expect(five[1].Hash).To(Equal(three[1].Hash))
	})

	It("renders the same bytes on every instance: nothing of the instance or its peers is read", func() {
		reference := rendered[workers[0]][counts[0]]
		Expect(rendered[workers[1]][counts[0]][0].Hash).To(Equal(reference[0].Hash))
		Expect(rendered[workers[1]][counts[0]][1].Hash).To(Equal(reference[1].Hash))
		onMaster := renderBoth(master(0, 1))
		Expect(onMaster[0].Hash).To(Equal(reference[0].Hash), "flanneld on a master")
		Expect(onMaster[1].Hash).To(Equal(reference[1].Hash), "cfcr-dns-aliases on a master")
	})
})

var linkUse = regexp.MustCompile(`\b(if_)?link\s*\(|\blinks\b`)

// linkCalls lists the template files of job that call link()/if_link() or read link data.
func linkCalls(job jobrender.Job) []string {
	var found []string
	for _, path := range job.TemplatePaths() {
		text, err := os.ReadFile(path)
		Expect(err).NotTo(HaveOccurred())
		if linkUse.Match(text) {
			found = append(found, path)
		}
	}
	return found
}

var _ = Describe("No template reads link data", func() {
	It("finds link() in a job that calls it (the scan works)", func() {
		linker, err := jobrender.LoadJob("../src/jobrender/testdata/jobs/linker")
		Expect(err).NotTo(HaveOccurred())
		Expect(linkCalls(linker)).To(ConsistOf(HaveSuffix("linked.erb")))
	})

	for _, name := range []string{"flanneld", "cfcr-dns-aliases"} {
		It(name+" calls no link() or if_link() and consumes no link", func() {
			job, err := jobrender.LoadJob("../jobs/" + name)
			Expect(err).NotTo(HaveOccurred())
			Expect(linkCalls(job)).To(BeEmpty())

			var spec struct {
				Consumes []interface{} `yaml:"consumes"`
			}
			data, err := os.ReadFile("../jobs/" + name + "/spec")
			Expect(err).NotTo(HaveOccurred())
			Expect(yaml.Unmarshal(data, &spec)).To(Succeed())
			Expect(spec.Consumes).To(BeEmpty())
		})
	}
})
