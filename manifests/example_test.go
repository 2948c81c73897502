package manifests_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/flannel-dns/flannel-dns/src/director/interpolate"
)

var _ = Describe("the standalone example", func() {
	var v view

	BeforeEach(func() {
		raw, err := interpolate.Manifest(bosh, example())
		Expect(err).NotTo(HaveOccurred())
		v = viewOf(raw)
	})

	It("names the etcd group, its network and the deployment in the aliases the nodes resolve", func() {
		etcd := v.etcdGroup()
		for _, g := range v.workers() {
			aliases := job(g, "cfcr-dns-aliases")
			Expect(aliases.Properties).To(HaveKeyWithValue("group", etcd.Name))
			Expect(aliases.Properties).To(HaveKeyWithValue("network", etcd.Networks[0]))
			Expect(aliases.Properties).To(HaveKeyWithValue("deployment", v.Name))
			flanneld := job(g, "flanneld")
			Expect(flanneld.Release).To(Equal("flannel-dns"))
			Expect(prop(flanneld.Properties, "etcd", "alias")).To(Equal("etcd." + aliases.Properties["domain"].(string)))
		}
	})

	It("has a server certificate for the alias and for the members' BOSH DNS names, which they advertise", func() {
		etcd := v.etcdGroup()
		props := job(etcd, "etcd").Properties
		Expect(prop(props, "etcd", "dns_suffix")).To(BeNil())
		serverCert, _ := ref(prop(props, "tls", "etcd", "certificate"))
		cert := issue(v.variable(serverCert))
		flanneld := job(v.workers()[0], "flanneld")
		Expect(hostnameError(cert, prop(flanneld.Properties, "etcd", "alias").(string))).To(BeEmpty())
		Expect(hostnameError(cert, "0b2a9e6c-1111-4222-8333-444455556666."+etcd.Name+"."+etcd.Networks[0]+"."+v.Name+".bosh")).To(BeEmpty())
		Expect(hostnameError(cert, "other.example")).NotTo(BeEmpty())
	})

	It("gives flanneld a client certificate from the CA etcd trusts for clients", func() {
		props := job(v.etcdGroup(), "etcd").Properties
		trusted := v.issuer(prop(props, "tls", "etcd", "ca"))
		flanneld := job(v.workers()[0], "flanneld").Properties
		cert, _ := ref(prop(flanneld, "tls", "etcdctl", "certificate"))
		Expect(v.variable(cert).Options.CA).To(Equal(trusted))
		Expect(v.issuer(prop(flanneld, "tls", "etcdctl", "ca"))).To(Equal(trusted))
	})
})
