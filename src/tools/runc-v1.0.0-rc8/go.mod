module github.com/flannel-dns/flannel-dns/tools/runc-v1.0.0-rc8

go 1.21

require (
	github.com/checkpoint-restore/go-criu v0.0.0-20181120144056-17b0214f6c48
	github.com/containerd/console v0.0.0-20180220200639-2748ece16665
	github.com/coreos/go-systemd v0.0.0-20161114122254-48702e0da86b
	github.com/coreos/pkg v0.0.0-20160727233714-3ac0863d7acf
	github.com/cyphar/filepath-securejoin v0.2.1
	github.com/docker/go-units v0.2.0
	github.com/godbus/dbus v0.0.0-20151105175453-c7fdd8b5cd55
	github.com/golang/protobuf v0.0.0-20170427213220-18c9bb326172
	github.com/mrunalp/fileutils v0.0.0-20160610222446-ed869b029674
	github.com/opencontainers/runc v1.0.0-rc8
	github.com/opencontainers/runtime-spec v1.0.2-0.20190207185410-29686dbc5559
	github.com/opencontainers/selinux v1.2.2
	github.com/pkg/errors v0.8.0
	github.com/seccomp/libseccomp-golang v0.9.1-0.20170424173420-84e90a91acea
	github.com/sirupsen/logrus v1.0.2-0.20170713114250-a3f95b5c4235
	github.com/syndtr/gocapability v0.0.0-20170704070218-db04d3cc01c8
	github.com/urfave/cli v1.18.1-0.20160917213806-d53eb991652b
	github.com/vishvananda/netlink v0.0.0-20150820014904-1e2e08e8a2dc
	golang.org/x/sys v0.0.0-20190204203706-41f3e6584952
)
