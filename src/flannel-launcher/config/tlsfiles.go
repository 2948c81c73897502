package config

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
)

// checkTLSFiles makes sure the files flanneld and the launcher will read are there, usable and private.
// Key material never appears in a message: only paths and modes do.
func checkTLSFiles(e Etcd) []string {
	var p problems
	ca, caErr := readFile(&p, "etcd.ca_file", e.CAFile)
	cert, certErr := readFile(&p, "etcd.cert_file", e.CertFile)
	key, keyErr := readFile(&p, "etcd.key_file", e.KeyFile)
	if caErr == nil {
		checkCAs(&p, e.CAFile, ca)
	}
	if keyErr == nil {
		checkPrivate(&p, "etcd.key_file", e.KeyFile)
	}
	if certErr == nil && keyErr == nil {
		pair, err := tls.X509KeyPair(cert, key)
		if err != nil {
			p.add("etcd.cert_file", "'%s' and etcd.key_file '%s' are not a usable certificate and key pair: %s", e.CertFile, e.KeyFile, err)
		} else if problem := keyProblem(pair.Leaf.PublicKey); problem != "" {
			p.add("etcd.cert_file", "'%s' has %s", e.CertFile, problem)
		}
	}
	return p
}

// checkCAs wants every certificate of the CA file usable: x509.CertPool.AppendCertsFromPEM skips one that Go
// cannot parse, and that one may be the CA that signed the etcd servers' certificates.
func checkCAs(p *problems, path string, data []byte) {
	n := 0
	for block, rest := pem.Decode(data); block != nil; block, rest = pem.Decode(rest) {
		if block.Type != "CERTIFICATE" {
			continue
		}
		n++
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			p.add("etcd.ca_file", "'%s': certificate %d cannot be used: %s", path, n, err)
		} else if problem := keyProblem(cert.PublicKey); problem != "" {
			p.add("etcd.ca_file", "'%s': certificate %d has %s", path, n, problem)
		}
	}
	if n == 0 {
		p.add("etcd.ca_file", "'%s' holds no PEM certificate", path)
	}
}

// keyProblem refuses an RSA key under 2048 bits, and the keys that crypto/x509 parses and crypto/tls cannot
// sign with (P-224, RSA under 1024 bits, DSA): with such a client key Go sends no certificate, and etcd
// answers "bad certificate". "" for a key that is fine. The template refuses the same.
func keyProblem(key any) string {
	switch k := key.(type) {
	case *rsa.PublicKey:
		if bits := k.N.BitLen(); bits < 2048 {
			return fmt.Sprintf("an RSA key of %d bits (at least 2048 are required)", bits)
		}
	case *ecdsa.PublicKey:
		if k.Curve != elliptic.P256() && k.Curve != elliptic.P384() && k.Curve != elliptic.P521() {
			return fmt.Sprintf("an ECDSA key on %s (P-256, P-384 or P-521 are required)", k.Curve.Params().Name)
		}
	case ed25519.PublicKey:
	default:
		return fmt.Sprintf("a %T key (RSA, ECDSA or Ed25519 are required)", key)
	}
	return ""
}

func readFile(p *problems, key, path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		p.add(key, "cannot read '%s': %s", path, describeFileError(err))
	}
	return data, err
}

func checkPrivate(p *problems, key, path string) {
	info, err := os.Stat(path)
	if err == nil && info.Mode().Perm()&0o004 != 0 {
		p.add(key, "'%s' is readable by others (mode %04o); it must not be (e.g. 0600 or 0640)", path, info.Mode().Perm())
	}
}

func describeFileError(err error) string {
	switch {
	case os.IsNotExist(err):
		return "no such file"
	case os.IsPermission(err):
		return "permission denied"
	}
	if pathErr, ok := err.(*os.PathError); ok {
		return pathErr.Err.Error()
	}
	return fmt.Sprint(err)
}
