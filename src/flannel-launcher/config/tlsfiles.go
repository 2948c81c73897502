package config

import (
	"crypto/tls"
	"crypto/x509"
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
	if caErr == nil && !x509.NewCertPool().AppendCertsFromPEM(ca) {
		p.add("etcd.ca_file", "'%s' holds no PEM certificate", e.CAFile)
	}
	if keyErr == nil {
		checkPrivate(&p, "etcd.key_file", e.KeyFile)
	}
	if certErr == nil && keyErr == nil {
		if _, err := tls.X509KeyPair(cert, key); err != nil {
			p.add("etcd.cert_file", "'%s' and etcd.key_file '%s' are not a usable certificate and key pair: %s", e.CertFile, e.KeyFile, err)
		}
	}
	return p
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
