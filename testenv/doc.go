// Package testenv holds the real parts that tests start in-process: a TLS etcd
// cluster, a DNS server and certificates. It is test support only and never ships.
package testenv

import (
	_ "github.com/cloudfoundry/bosh-cli/v7/templatescompiler/erbrenderer"
	_ "github.com/miekg/dns"
	_ "github.com/onsi/ginkgo/v2"
	_ "github.com/onsi/gomega"
	_ "github.com/onsi/gomega/gexec"
	_ "go.etcd.io/etcd/client/v3"
	_ "go.etcd.io/etcd/server/v3/embed"
)
