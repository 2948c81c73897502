module github.com/flannel-dns/flannel-dns/tools/cni-plugins-v0.7.1

go 1.21

require (
	github.com/alexflint/go-filemutex v0.0.0-20171022225611-72bdc8eae2ae
	github.com/containernetworking/cni v0.6.0-rc1
	github.com/containernetworking/plugins v0.7.1
	github.com/coreos/go-iptables v0.2.0
	github.com/j-keck/arping v0.0.0-20160618110441-2cf9dc699c56
	github.com/mattn/go-shellwords v1.0.3
	github.com/vishvananda/netlink v0.0.0-20170630184320-6e453822d85e
	github.com/vishvananda/netns v0.0.0-20170219233438-54f0e4339ce7
	golang.org/x/sys v0.0.0-20160601133225-076b54675315
)
