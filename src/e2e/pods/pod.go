// Package pods probes between pods continuously over UDP: every pod sends to every other pod, and each
// echoes. Pods are made through CNI by package cni.
package pods

import "net/netip"

// Pod is what the probe needs of a pod: its network namespace (a name under /run/netns, or the path of its
// namespace file) and its address.
type Pod struct {
	Namespace string
	Address   netip.Addr
}
