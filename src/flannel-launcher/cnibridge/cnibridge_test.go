package cnibridge_test

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/cnibridge"
)

var network = netip.MustParsePrefix("198.18.0.0/15")

var _ = Describe("Follow", func() {
	var (
		ns     string
		handle *netlink.Handle
	)

	ip := func(args ...string) string {
		out, err := exec.Command("ip", append([]string{"-n", ns}, args...)...).CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), "ip %s: %s", strings.Join(args, " "), out)
		return string(out)
	}

	BeforeEach(func() {
		if os.Geteuid() != 0 {
			Skip("needs root: it makes a network namespace with a bridge")
		}
		ns = fmt.Sprintf("fde%d-cnibridge", os.Getpid())
		out, err := exec.Command("ip", "netns", "add", ns).CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), string(out))
		DeferCleanup(func() { Expect(exec.Command("ip", "netns", "del", ns).Run()).To(Succeed()) })
		nsHandle, err := netns.GetFromName(ns)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(nsHandle.Close)
		handle, err = netlink.NewHandleAt(nsHandle)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(handle.Close)
	})

	bridgeWith := func(addrs ...string) {
		ip("link", "add", "cni0", "type", "bridge")
		for _, a := range addrs {
			ip("addr", "add", a, "dev", "cni0")
		}
		ip("link", "set", "cni0", "up")
	}

	It("puts the new gateway on the bridge in place of the old one, and with it the node's route", func() {
		bridgeWith("198.18.5.1/24")
		Expect(ip("-4", "route", "show", "198.18.5.0/24")).To(ContainSubstring("cni0"))

		removed, err := cnibridge.Follow(handle, "cni0", network, netip.MustParsePrefix("198.18.9.1/24"))
		Expect(err).NotTo(HaveOccurred())
		Expect(removed).To(Equal([]netip.Prefix{netip.MustParsePrefix("198.18.5.1/24")}))
		Expect(ip("-4", "-o", "addr", "show", "cni0")).To(SatisfyAll(
			ContainSubstring("inet 198.18.9.1/24"), Not(ContainSubstring("198.18.5.1"))))
		Expect(ip("-4", "route", "show", "198.18.5.0/24")).To(BeEmpty())
		Expect(ip("-4", "route", "show", "198.18.9.0/24")).To(ContainSubstring("cni0"))
		Expect(ip("-6", "addr", "show", "cni0")).To(ContainSubstring("inet6 fe80::"), "the link-local address went too")
	})

	It("keeps the gateway of the current subnet and removes any other", func() {
		bridgeWith("198.18.9.1/24", "198.18.5.1/24")
		removed, err := cnibridge.Follow(handle, "cni0", network, netip.MustParsePrefix("198.18.9.1/24"))
		Expect(err).NotTo(HaveOccurred())
		Expect(removed).To(Equal([]netip.Prefix{netip.MustParsePrefix("198.18.5.1/24")}))
		Expect(ip("-4", "-o", "addr", "show", "cni0")).To(SatisfyAll(
			ContainSubstring("inet 198.18.9.1/24"), Not(ContainSubstring("198.18.5.1"))))
	})

	It("leaves the addresses outside the pod network alone, as flanneld does with its own devices", func() {
		bridgeWith("198.18.5.1/24", "192.0.2.7/24", "198.19.0.1/16")
		removed, err := cnibridge.Follow(handle, "cni0", network, netip.MustParsePrefix("198.18.9.1/24"))
		Expect(err).NotTo(HaveOccurred())
		Expect(removed).To(ConsistOf(netip.MustParsePrefix("198.18.5.1/24"), netip.MustParsePrefix("198.19.0.1/16")))
		Expect(ip("-4", "-o", "addr", "show", "cni0")).To(SatisfyAll(
			ContainSubstring("inet 192.0.2.7/24"), Not(ContainSubstring("198.18.5.1")), Not(ContainSubstring("198.19.0.1"))))
	})

	It("changes nothing when the bridge carries the gateway already", func() {
		bridgeWith("198.18.9.1/24")
		removed, err := cnibridge.Follow(handle, "cni0", network, netip.MustParsePrefix("198.18.9.1/24"))
		Expect(err).NotTo(HaveOccurred())
		Expect(removed).To(BeEmpty())
		Expect(ip("-4", "-o", "addr", "show", "cni0")).To(ContainSubstring("inet 198.18.9.1/24"))
	})

	It("leaves a node without a bridge alone (no pod since boot)", func() {
		removed, err := cnibridge.Follow(handle, "cni0", network, netip.MustParsePrefix("198.18.9.1/24"))
		Expect(err).NotTo(HaveOccurred())
		Expect(removed).To(BeEmpty())
	})

	Describe("Keep", func() {
		It("takes the old gateway off again each time docker's start makes the bridge anew with it, until stopped", func() {
			bridgeWith("198.18.5.1/24")
			nsHandle, err := netns.GetFromName(ns)
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(nsHandle.Close)
			var mu sync.Mutex
			var removed []netip.Prefix
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() {
				defer GinkgoRecover()
				done <- cnibridge.Keep(ctx, &nsHandle, "cni0", network, netip.MustParsePrefix("198.18.9.1/24"),
					func(r []netip.Prefix, err error) {
						Expect(err).NotTo(HaveOccurred())
						mu.Lock()
						defer mu.Unlock()
						removed = append(removed, r...)
					})
			}()
			count := func() int {
				mu.Lock()
				defer mu.Unlock()
				return len(removed)
			}
			Eventually(count).Should(Equal(1), "the address there at the start")

			// docker's ctl: delete cni0, make it, give it FLANNEL_SUBNET of the file it sourced
			ip("link", "delete", "cni0")
			bridgeWith("198.18.5.1/24")
			Eventually(count).Should(Equal(2))
			Eventually(func() string { return ip("-4", "-o", "addr", "show", "cni0") }).Should(SatisfyAll(
				ContainSubstring("inet 198.18.9.1/24"), Not(ContainSubstring("198.18.5.1"))))
			ip("addr", "add", "192.0.2.7/24", "dev", "cni0")
			Consistently(count, "300ms").Should(Equal(2), "the gateway and an address outside the pod network stay")

			cancel()
			Eventually(done).Should(Receive(BeNil()))
			ip("addr", "add", "198.18.5.1/24", "dev", "cni0")
			Consistently(func() string { return ip("-4", "addr", "show", "cni0") }, "300ms").Should(ContainSubstring("198.18.5.1"))
		})
	})
})
