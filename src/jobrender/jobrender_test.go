package jobrender_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/cloudfoundry/bosh-cli/v7/templatescompiler"
	boshlog "github.com/cloudfoundry/bosh-utils/logger"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/flannel-dns/flannel-dns/src/jobrender"
)

var _ = Describe("LoadJob", func() {
	It("reads the name, templates, packages and properties of a spec", func() {
		job, err := jobrender.LoadJob("testdata/jobs/sample")
		Expect(err).NotTo(HaveOccurred())
		Expect(job.Name).To(Equal("sample"))
		Expect(job.Packages).To(Equal([]string{"sample-package"}))
		Expect(job.Templates).To(HaveKeyWithValue("run.erb", "bin/run"))
		Expect(job.Properties).To(HaveKeyWithValue("greeting.word", jobrender.Property{
			Description: "A nested property with a default", Default: "hello",
		}))
		Expect(job.TemplatePaths()).To(ContainElements(
			"testdata/jobs/sample/monit", "testdata/jobs/sample/templates/run.erb"))
	})

	It("names a template that the spec lists but the job lacks", func() {
		_, err := jobrender.LoadJob("testdata/jobs/broken")
		Expect(err).To(MatchError(ContainSubstring("'missing.erb'")))
	})

	It("fails for a directory without a spec", func() {
		_, err := jobrender.LoadJob("testdata/jobs")
		Expect(err).To(MatchError(ContainSubstring("Reading job spec")))
	})
})

var _ = Describe("Renderer", func() {
	var (
		renderer jobrender.Renderer
		job      jobrender.Job
		instance jobrender.Instance
	)

	BeforeEach(func() {
		renderer = jobrender.NewRenderer(boshlog.NewLogger(boshlog.LevelNone))
		var err error
		job, err = jobrender.LoadJob("testdata/jobs/sample")
		Expect(err).NotTo(HaveOccurred())
		instance = jobrender.Instance{
			Group: "worker", ID: "6b2c4c0e-0d5c-4f43-9d8a-2f6a3f0c1a11", Index: 3, AZ: "z2",
			Address: "6b2c4c0e.worker.default.cfcr.bosh", Deployment: "cfcr", Bootstrap: true,
			Networks: map[string]jobrender.Network{"default": {IP: "192.0.2.13", Netmask: "255.255.255.0"}},
		}
	})

	render := func(properties map[string]interface{}) jobrender.Rendered {
		rendered, err := renderer.Render(job, properties, instance)
		Expect(err).NotTo(HaveOccurred())
		return rendered
	}

	It("renders every template and the monit file by destination path", func() {
		rendered := render(nil)
		Expect(rendered.Paths()).To(Equal([]string{
			"bin/run", "config/failing", "config/greeting.txt", "config/instance.txt", jobrender.MonitPath,
		}))
		Expect(string(rendered.Files[jobrender.MonitPath])).To(Equal("check process sample-3\n"))
	})

	It("uses the spec's defaults for properties the manifest leaves out", func() {
		Expect(string(render(nil).Files["config/greeting.txt"])).To(Equal("hello hello\n\n"))
	})

	It("uses the manifest's nested properties over the defaults", func() {
		rendered := render(map[string]interface{}{
			"greeting": map[string]interface{}{"word": "hi", "count": 3},
			"optional": "set",
		})
		Expect(string(rendered.Files["config/greeting.txt"])).To(Equal("hi hi hi\noptional=set\n"))
	})

	It("exposes the instance as spec.*", func() {
		lines := strings.Split(string(render(nil).Files["config/instance.txt"]), "\n")
		Expect(lines).To(ContainElements(
			"name=worker", "job=sample", "id=6b2c4c0e-0d5c-4f43-9d8a-2f6a3f0c1a11", "index=3", "az=z2",
			"address=6b2c4c0e.worker.default.cfcr.bosh", "deployment=cfcr", "bootstrap=true", "ip=192.0.2.13",
		))
	})

	It("gives templates every field of the bosh CLI's RootContext", func() {
		var keysLine string
		for _, line := range strings.Split(string(render(nil).Files["config/instance.txt"]), "\n") {
			if strings.HasPrefix(line, "keys=") {
				keysLine = strings.TrimPrefix(line, "keys=")
			}
		}
		keys := strings.Split(keysLine, ",")
		root := reflect.TypeOf(templatescompiler.RootContext{})
		for i := 0; i < root.NumField(); i++ {
			name := strings.Split(root.Field(i).Tag.Get("json"), ",")[0]
			Expect(keys).To(ContainElement(name))
		}
	})

	It("returns a template's raise message in the error", func() {
		_, err := renderer.Render(job, map[string]interface{}{"fail": true}, instance)
		Expect(err).To(MatchError(ContainSubstring("fail: must be false, got 'true'")))
		Expect(err).To(MatchError(ContainSubstring("config/failing")))
	})

	It("fails a template that calls link()", func() {
		linker, err := jobrender.LoadJob("testdata/jobs/linker")
		Expect(err).NotTo(HaveOccurred())
		instance.Links = map[string]interface{}{"etcd": map[string]interface{}{"instances": []interface{}{}}}
		_, err = renderer.Render(linker, nil, instance)
		Expect(err).To(MatchError(ContainSubstring("link")))
	})

	Describe("RenderFile", func() {
		It("renders the one template with that destination", func() {
			content, err := renderer.RenderFile(job, "config/greeting.txt", map[string]interface{}{"optional": "o"}, instance)
			Expect(err).NotTo(HaveOccurred())
			Expect(string(content)).To(Equal("hello hello\noptional=o\n"))
		})

		It("names a destination that no template renders", func() {
			_, err := renderer.RenderFile(job, "config/nothing", nil, instance)
			Expect(err).To(MatchError(ContainSubstring("'config/nothing'")))
		})
	})

	Describe("Hash", func() {
		It("is the same for the same input", func() {
			Expect(render(nil).Hash).To(Equal(render(nil).Hash))
		})

		It("changes when any rendered file changes", func() {
			base := render(nil).Hash
			Expect(render(map[string]interface{}{"optional": "x"}).Hash).NotTo(Equal(base))
			instance.Index = 4
			Expect(render(nil).Hash).NotTo(Equal(base))
		})
	})

	Describe("WriteTo", func() {
		It("writes executables under bin/ and other files for owner and group only", func() {
			dir := GinkgoT().TempDir()
			Expect(render(nil).WriteTo(dir)).To(Succeed())
			run, err := os.Stat(filepath.Join(dir, "bin/run"))
			Expect(err).NotTo(HaveOccurred())
			Expect(run.Mode().Perm()).To(Equal(os.FileMode(0o750)))
			greeting, err := os.ReadFile(filepath.Join(dir, "config/greeting.txt"))
			Expect(err).NotTo(HaveOccurred())
			Expect(string(greeting)).To(Equal("hello hello\n\n"))
		})
	})
})
