package spectests_test

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/config"
	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/members"
)

// The template checks the PEMs with OpenSSL, the launcher with Go, which takes less: no secp256k1, no negative
// serial. A PEM that the template takes and Go refuses renders, and then flanneld never starts. The spec below
// renders each case of testdata/tls-corpus.rb and runs the launcher's own checks on the files the template
// rendered (config.Load, then members.TLSConfig as `run` does); what both take must complete a TLS handshake.
var _ = Describe("the template's TLS checks and the launcher's", func() {
	It("take and refuse the same PEMs, the launcher loading the files rendered, and what both take works", func() {
		corpus := tlsCorpus()
		defaults, err := renderedDefaults()
		Expect(err).NotTo(HaveOccurred())
		var disagreements []string
		for _, name := range slices.Sorted(maps.Keys(corpus)) {
			if problem := tlsDisagreement(corpus[name], tlsRefusals[name], defaults); problem != "" {
				disagreements = append(disagreements, name+": "+problem)
			}
		}
		Expect(disagreements).To(BeEmpty(), strings.Join(disagreements, "\n"))
	})
})

// tlsRefusal is what the template says about a case it refuses, and the key under which the launcher does.
type tlsRefusal struct{ template, launcherKey string }

// tlsRefusals are the cases of testdata/tls-corpus.rb that both refuse; they take the others. Until
// 2026-12-07 the template took them all, and the launcher took the RSA keys of 1024 and 2047 bits (Go's
// least is 1024) and the P-224 key, with which TLS cannot sign.
var tlsRefusals = map[string]tlsRefusal{
	"a secp256k1 client key": {"tls.etcdctl.certificate has an ECDSA key on secp256k1 (P-256, P-384 or P-521 are required)",
		"etcd.cert_file"},
	"a secp256k1 CA":     {"tls.etcdctl.ca: certificate 1 has an ECDSA key on secp256k1", "etcd.ca_file"},
	"a P-224 client key": {"tls.etcdctl.certificate has an ECDSA key on secp224r1", "etcd.cert_file"},
	"an RSA 1024 client key": {"tls.etcdctl.certificate has an RSA key of 1024 bits (at least 2048 are required)",
		"etcd.cert_file"},
	"an RSA 2047 client key": {"tls.etcdctl.certificate has an RSA key of 2047 bits", "etcd.cert_file"},
	"an RSA 512 client key":  {"tls.etcdctl.certificate has an RSA key of 512 bits", "etcd.cert_file"},
	"an RSA 1024 CA":         {"tls.etcdctl.ca: certificate 1 has an RSA key of 1024 bits", "etcd.ca_file"},
	"a client certificate with a negative serial": {"tls.etcdctl.certificate has a negative serial number",
		"etcd.cert_file"},
	"a CA with a negative serial": {"tls.etcdctl.ca: certificate 1 has a negative serial number", "etcd.ca_file"},
	// x509.CertPool.AppendCertsFromPEM skips a certificate it cannot parse, and the CA that signed the etcd
	// servers' certificates may be that one.
	"a CA bundle whose second certificate is secp256k1": {"tls.etcdctl.ca: certificate 2 has an ECDSA key on secp256k1",
		"etcd.ca_file"},
}

// tlsFiles are the files that the template renders from the TLS properties, by the property each holds.
var tlsFiles = map[string]string{
	"ca": "config/etcd-ca.crt", "certificate": "config/etcd-client.crt", "private_key": "config/etcd-client.key",
}

// tlsDisagreement renders the launcher's config and TLS files from a case's PEMs, loads them as the launcher
// does, and tells where the two part or what both take does not work; "" if nowhere.
func tlsDisagreement(pems map[string]string, refusal tlsRefusal, defaults []byte) string {
	dotted := map[string]interface{}{}
	for field := range tlsFiles {
		dotted["tls.etcdctl."+field] = pems[field]
	}
	_, renderErr := renderConfig(dotted)
	files := map[string][]byte{}
	for field, file := range tlsFiles {
		if renderErr != nil { // what the template would have written
			files[file] = []byte(strings.TrimSpace(pems[field]))
			continue
		}
		content, err := renderer.RenderFile(flanneld, file, withTLS(dotted), worker(0))
		Expect(err).NotTo(HaveOccurred())
		files[file] = content
	}
	cfg, launcherErr := loadTLSFiles(defaults, files)
	var invalid *config.InvalidError
	switch {
	case refusal.template == "" && renderErr != nil:
		return "the template refuses it: " + templateProblems(renderErr)
	case refusal.template != "" && renderErr == nil:
		return fmt.Sprintf("the template takes it; the launcher: %v", launcherErr)
	case refusal.template != "" && !strings.Contains(renderErr.Error(), refusal.template):
		return fmt.Sprintf("the template refuses it, but not with %q: %s", refusal.template, templateProblems(renderErr))
	case refusal.template == "" && launcherErr != nil:
		return "the template takes it, the launcher refuses it: " + launcherErr.Error()
	case refusal.template != "" && launcherErr == nil:
		return "the template refuses it, the launcher takes it"
	case refusal.template != "" && (!errors.As(launcherErr, &invalid) ||
		!slices.ContainsFunc(invalid.Problems, func(p string) bool { return strings.HasPrefix(p, refusal.launcherKey+": ") })):
		return fmt.Sprintf("the launcher refuses it, but not at config load under %s: %s", refusal.launcherKey, launcherErr)
	case refusal.template == "":
		if err := handshake(cfg, pems); err != nil {
			return "both take it, and the TLS handshake with it fails: " + err.Error()
		}
	}
	return ""
}

// templateProblems is the template's message, out of the renderer's.
func templateProblems(err error) string {
	message := err.Error()
	if i := strings.Index(message, "invalid properties: "); i >= 0 {
		message = message[i:]
	}
	message, _, _ = strings.Cut(message, ">")
	return message
}

// tlsCorpus is testdata/tls-corpus.rb's cases and the suite's own material, by name.
func tlsCorpus() map[string]map[string]string {
	out, err := exec.Command("ruby", "testdata/tls-corpus.rb").Output()
	Expect(err).NotTo(HaveOccurred())
	var corpus map[string]map[string]string
	Expect(json.Unmarshal(out, &corpus)).To(Succeed())
	return corpus
}

// loadTLSFiles writes the TLS files as the job has them (the key 0600), points the rendered config at them and
// runs the launcher's checks of them: config.Load, then members.TLSConfig, as `run` does.
func loadTLSFiles(defaults []byte, files map[string][]byte) (*tls.Config, error) {
	dir := GinkgoT().TempDir()
	paths := map[string]any{}
	for file, key := range map[string]string{
		"config/etcd-ca.crt": "etcd.ca_file", "config/etcd-client.crt": "etcd.cert_file", "config/etcd-client.key": "etcd.key_file",
	} {
		path := filepath.Join(dir, filepath.Base(file))
		Expect(os.WriteFile(path, files[file], 0o600)).To(Succeed())
		paths[key] = path
	}
	configPath := filepath.Join(dir, "flannel-launcher.json")
	Expect(os.WriteFile(configPath, placed(defaults, paths), 0o600)).To(Succeed())
	cfg, err := config.Load(configPath)
	if err != nil {
		return nil, err
	}
	return members.TLSConfig(cfg.Etcd, time.Now())
}

// handshake runs a TLS handshake from client, as the launcher configures it, with a server whose certificate
// the case's CA signed and that wants a client certificate from that CA.
func handshake(client *tls.Config, pems map[string]string) error {
	serverPair, err := tls.X509KeyPair([]byte(pems["server_certificate"]), []byte(pems["server_key"]))
	Expect(err).NotTo(HaveOccurred())
	clientCAs := x509.NewCertPool()
	Expect(clientCAs.AppendCertsFromPEM([]byte(pems["ca"]))).To(BeTrue())
	listener, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{serverPair},
		ClientCAs: clientCAs, ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12})
	Expect(err).NotTo(HaveOccurred())
	defer listener.Close()
	served := make(chan error, 1)
	go func() {
		conn, err := listener.Accept()
		if err == nil {
			err = conn.(*tls.Conn).Handshake()
			conn.Close()
		}
		served <- err
	}()
	conn, err := tls.Dial("tcp", listener.Addr().String(), client)
	if err == nil {
		err = conn.Handshake()
		conn.Close()
	}
	if serverErr := <-served; err == nil && serverErr != nil {
		err = fmt.Errorf("the server: %w", serverErr)
	}
	return err
}
