package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"

	"github.com/flannel-dns/flannel-dns/src/e2e/master"
	"github.com/flannel-dns/flannel-dns/src/e2e/network"
)

// metrics fetches https://host:2379/metrics from inside from's VM (its namespace and its DNS server),
// with the etcd job's client certificate, verifying the member's certificate for host.
func metrics(from *master.Member, host string) (string, error) {
	out, err := from.Run("getent", "ahostsv4", host)
	fields := strings.Fields(out)
	if err != nil || len(fields) == 0 {
		return "", bosherr.Errorf("Resolving %s on %s: %v", host, from.Name, err)
	}
	tlsConfig, err := clientTLS(from, host)
	if err != nil {
		return "", err
	}
	conn, err := dialIn(from.Namespace, net.JoinHostPort(fields[0], "2379"))
	if err != nil {
		return "", err
	}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: tlsConfig, DisableKeepAlives: true,
		DialContext: func(context.Context, string, string) (net.Conn, error) { return conn, nil },
	}}
	resp, err := client.Get("https://" + host + ":2379/metrics")
	if err != nil {
		return "", bosherr.WrapErrorf(err, "Reading the metrics of %s", host)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		return "", bosherr.Errorf("Reading the metrics of %s: status %s, %v", host, resp.Status, err)
	}
	return string(body), nil
}

func clientTLS(m *master.Member, host string) (*tls.Config, error) {
	caPEM, err := os.ReadFile(m.Path(master.ConfigDir + "/etcdctl-ca.crt"))
	if err != nil {
		return nil, bosherr.WrapErrorf(err, "Reading the etcd CA on %s", m.Name)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) {
		return nil, bosherr.Errorf("No certificate in the etcd CA file on %s", m.Name)
	}
	cert, err := tls.LoadX509KeyPair(m.Path(master.ConfigDir+"/etcdctl.crt"), m.Path(master.ConfigDir+"/etcdctl.key"))
	if err != nil {
		return nil, bosherr.WrapErrorf(err, "Loading the etcd client certificate on %s", m.Name)
	}
	return &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{cert}, ServerName: host, MinVersion: tls.VersionTLS12}, nil
}

// dialIn connects to addr from inside namespace ns.
func dialIn(ns, addr string) (net.Conn, error) {
	var conn net.Conn
	err := network.InNamespace(ns, func() error {
		var err error
		if conn, err = net.DialTimeout("tcp", addr, 5*time.Second); err != nil {
			return bosherr.WrapErrorf(err, "Connecting to %s in %s", addr, ns)
		}
		return nil
	})
	return conn, err
}
