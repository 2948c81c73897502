module github.com/flannel-dns/flannel-dns/src/flannel-launcher

go 1.26

require (
	github.com/cloudfoundry/bosh-utils v0.0.552
	github.com/miekg/dns v1.1.73
	go.etcd.io/etcd/client/v3 v3.6.16
)
