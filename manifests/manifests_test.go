package manifests_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"maps"
	"math/big"
	"net"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/flannel-dns/flannel-dns/src/director/interpolate"
	"github.com/flannel-dns/flannel-dns/src/director/placement"
)

var _ = Describe("the swap-in ops-files", func() {
	for _, f := range fixtures {
		Describe(f.file, func() {
			var before, after view

			BeforeEach(func() {
				raw, err := interpolate.Manifest(bosh, f.path())
				Expect(err).NotTo(HaveOccurred())
				before = viewOf(raw)
				after = viewOf(f.adopted())
			})

			It("adds the flannel-dns release at the newest final version, the one it was tested with", func() {
				Expect(after.Releases).To(ContainElement(release{Name: "flannel-dns", Version: newestFinal()}))
			})

			It("moves flanneld to flannel-dns wherever it runs, keeping kubo's properties", func() {
				var swapped []string
				for _, g := range before.Groups {
					old, found := g.Job("flanneld")
					if !found {
						continue
					}
					swapped = append(swapped, g.Name)
					now := job(groupOf(after, g.Name), "flanneld")
					Expect(now.Release).To(Equal("flannel-dns"))
					for key, value := range old.Properties {
						Expect(now.Properties).To(HaveKeyWithValue(key, value), "instance group %s", g.Name)
					}
				}
				Expect(swapped).To(ConsistOf("master", "worker"))
				for _, g := range after.Groups {
					Expect(g.HasJob("flanneld", "kubo")).To(BeFalse(), "instance group %s", g.Name)
				}
			})

			It("points the launcher at the etcd alias that cfcr-etcd's DNS suffix implies", func() {
				suffix := prop(job(after.etcdGroup(), "etcd").Properties, "etcd", "dns_suffix")
				for _, g := range groupsWith(after, "flanneld") {
					Expect(prop(job(g, "flanneld").Properties, "etcd", "alias")).To(Equal(suffix), "instance group %s", g.Name)
				}
			})

			It("gives flanneld a client certificate that etcd accepts and the CA that signed etcd's server certificate", func() {
				etcdTLS := job(after.etcdGroup(), "etcd").Properties
				trustedClientCA := after.issuer(prop(etcdTLS, "tls", "etcd", "ca"))
				serverCert, _ := ref(prop(etcdTLS, "tls", "etcd", "certificate"))

				for _, g := range groupsWith(after, "flanneld") {
					props := job(g, "flanneld").Properties
					cert, field := ref(prop(props, "tls", "etcdctl", "certificate"))
					Expect(field).To(Equal("certificate"))
					key, field := ref(prop(props, "tls", "etcdctl", "private_key"))
					Expect([]string{key, field}).To(Equal([]string{cert, "private_key"}))

					client := after.variable(cert)
					Expect(client.Type).To(Equal("certificate"))
					Expect(client.Options.CA).To(Equal(trustedClientCA))
					Expect(client.Options.ExtendedKeyUsage).To(ContainElement("client_auth"))
					Expect(after.issuer(prop(props, "tls", "etcdctl", "ca"))).To(Equal(after.variable(serverCert).Options.CA))
				}
			})

			It("re-issues etcd's server certificate for every name the launcher and flanneld dial", func() {
				etcd := after.etcdGroup()
				props := job(etcd, "etcd").Properties
				serverCert, _ := ref(prop(props, "tls", "etcd", "certificate"))
				server := after.variable(serverCert)
				Expect(server.UpdateMode).To(Equal("converge"))

				suffix := prop(props, "etcd", "dns_suffix").(string)
				dialed := []string{suffix}
				for n := range 12 {
					// cfcr-etcd advertises <group>-<index>.<dns_suffix>
					dialed = append(dialed, fmt.Sprintf("%s-%d.%s", etcd.Name, n, suffix))
				}
				cert := issue(server)
				for _, name := range dialed {
					Expect(hostnameError(cert, name)).To(BeEmpty())
				}
				for _, name := range []string{"master.cfcr.internal", "x.master-0." + suffix, suffix + ".example"} {
					Expect(hostnameError(cert, name)).NotTo(BeEmpty(), name)
				}
				// before: CN only, which Go ignores
				Expect(hostnameError(issue(before.variable(serverCert)), suffix)).NotTo(BeEmpty())
			})

			It("names every master, by the BOSH name bosh-dns gives its address, in etcd's peer certificate", func() {
				etcd := after.etcdGroup()
				props := job(etcd, "etcd").Properties
				peerCert, _ := ref(prop(props, "tls", "peer", "certificate"))
				cert := issue(after.variable(peerCert))
				// etcd checks a peer certificate that has names against the peer's address; the reverse lookup of
				// a member's address answers <instance id>.<group>.<network>.<deployment>.bosh.
				boshName := fmt.Sprintf("7c1dd3a4-5d9f-4a63-9c31-0e5e5f1a2b3c.%s.%s.%s.bosh", etcd.Name, etcd.Networks[0], after.Name)
				Expect(hostnameError(cert, boshName)).To(BeEmpty())
				Expect(hostnameError(cert, strings.Replace(boshName, "."+etcd.Name+".", ".worker.", 1))).NotTo(BeEmpty())
			})

			It("names every member exactly in etcd's peer certificate, so that bosh-dns without reverse lookups admits it", func() {
				etcd := after.etcdGroup()
				props := job(etcd, "etcd").Properties
				peerCert, _ := ref(prop(props, "tls", "peer", "certificate"))
				// etcd 3.3 checks a peer certificate's wildcard names only against a reverse lookup of the peer's
				// address, which bosh-dns before 1.18 does not answer, and its exact names by resolving them: each
				// per-member alias on the masters must be an exact name, since it answers its instance, healthy or not.
				exact := map[string]bool{}
				for _, name := range after.variable(peerCert).Options.AlternativeNames {
					exact[name] = !strings.HasPrefix(name, "*")
				}
				members := 0
				for name, targets := range renderedAliases(after, etcd) {
					if strings.HasPrefix(targets[0], "q-i") {
						members++
						Expect(exact).To(HaveKeyWithValue(name, true), "per-member alias %s", name)
					}
				}
				Expect(members).To(Equal(7))
			})

			It("replaces kubo-dns-aliases with cfcr-dns-aliases, named after the manifest, wherever flanneld runs", func() {
				etcd := after.etcdGroup()
				suffix := prop(job(etcd, "etcd").Properties, "etcd", "dns_suffix")
				for _, g := range groupsWith(after, "flanneld") {
					Expect(g.HasJob("kubo-dns-aliases", "kubo")).To(BeFalse(), "instance group %s", g.Name)
					aliases := job(g, "cfcr-dns-aliases")
					Expect(aliases.Release).To(Equal("flannel-dns"))
					Expect(aliases.Properties).To(HaveKeyWithValue("group", etcd.Name))
					Expect(aliases.Properties).To(HaveKeyWithValue("network", etcd.Networks[0]))
					Expect(aliases.Properties).To(HaveKeyWithValue("deployment", after.Name))
					Expect("etcd." + aliases.Properties["domain"].(string)).To(Equal(suffix))
				}
				Expect(groupOf(after, "apply-addons").HasJob("kubo-dns-aliases", "kubo")).To(BeTrue())
			})

			It("resolves on every VM the names that kubo-dns-aliases gave, plus the etcd alias", func() {
				etcd := after.etcdGroup()
				suffix := prop(job(etcd, "etcd").Properties, "etcd", "dns_suffix").(string)
				want := []string{"master.cfcr.internal", suffix}
				for n := range 7 {
					want = append(want, fmt.Sprintf("%s-%d.%s", etcd.Name, n, suffix))
				}
				for _, g := range groupsWith(after, "cfcr-dns-aliases") {
					Expect(slices.Sorted(maps.Keys(renderedAliases(after, g)))).To(ContainElements(want), g.Name)
				}
			})

			It("leaves etcd's v3 auth off, so kube-apiserver and the etcd job's own etcdctl keep working", func() {
				users, _ := prop(job(after.etcdGroup(), "etcd").Properties, "users").([]any)
				for _, u := range users {
					Expect(prop(u.(map[string]any), "versions")).NotTo(ContainElement("v3"))
				}
				Expect(users).To(Equal(mustSlice(prop(job(before.etcdGroup(), "etcd").Properties, "users"))))
			})
		})
	}

	It("refuses a companion that does not fit the manifest", func() {
		_, err := interpolate.Manifest(bosh, fixtures[0].path(), opsFile("use-flannel-dns.yml"), opsFile(fixtures[1].companion))
		Expect(err).To(MatchError(ContainSubstring("tls-etcd-v0-29-0")))
		_, err = interpolate.Manifest(bosh, fixtures[1].path(), opsFile("use-flannel-dns.yml"), opsFile(fixtures[0].companion))
		Expect(err).To(MatchError(ContainSubstring("tls-etcd-v0-17-0")))
	})
})

func groupOf(v view, name string) placement.Group {
	g, found := v.Group(name)
	Expect(found).To(BeTrue(), "no instance group %q", name)
	return g
}

func groupsWith(v view, jobName string) []placement.Group {
	var gs []placement.Group
	for _, g := range v.Groups {
		if _, found := g.Job(jobName); found {
			gs = append(gs, g)
		}
	}
	Expect(gs).NotTo(BeEmpty(), "no instance group runs %s", jobName)
	return gs
}

func mustSlice(v any) []any {
	s, _ := v.([]any)
	return s
}

// hostnameError is Go's verdict on whether cert is valid for name: empty when it is.
func hostnameError(cert *x509.Certificate, name string) string {
	if err := cert.VerifyHostname(name); err != nil {
		return err.Error()
	}
	return ""
}

// issue makes a certificate from a certificate variable's options, as the config server would, so that Go's own
// host name check can be asked about it.
func issue(v variable) *x509.Certificate {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	Expect(err).NotTo(HaveOccurred())
	template := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: v.Options.CommonName},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
	}
	for _, name := range v.Options.AlternativeNames {
		if ip := net.ParseIP(name); ip != nil {
			template.IPAddresses = append(template.IPAddresses, ip)
		} else {
			template.DNSNames = append(template.DNSNames, name)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
	Expect(err).NotTo(HaveOccurred())
	cert, err := x509.ParseCertificate(der)
	Expect(err).NotTo(HaveOccurred())
	return cert
}
