// echospoofer answers every ICMP echo request that arrives in its network namespace for TARGET with a forged
// echo reply, as an off-path host that guessed the identifier and the sequence number would. It reads the
// requests before netfilter (AF_PACKET), so it answers even while the namespace drops everything it receives.
// It prints "spoofing" once ready and "forged N" after each reply.
//
//	echospoofer TARGET wrong-payload        the reply comes from TARGET, without the request's payload
//	echospoofer TARGET other-source SOURCE  the reply carries the request's payload back, from SOURCE
package main

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"os"

	"golang.org/x/net/icmp"
	"golang.org/x/net/ipv4"
	"golang.org/x/sys/unix"
)

func main() {
	args := os.Args[1:]
	if len(args) < 2 || (args[1] == "other-source") != (len(args) == 3) {
		fmt.Fprintln(os.Stderr, "usage: echospoofer TARGET wrong-payload | echospoofer TARGET other-source SOURCE")
		os.Exit(2)
	}
	target := netip.MustParseAddr(args[0])
	source := target
	if len(args) == 3 {
		source = netip.MustParseAddr(args[2])
	}
	if err := spoof(target, source, args[1] == "wrong-payload"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func spoof(target, source netip.Addr, dropPayload bool) error {
	packets, err := unix.Socket(unix.AF_PACKET, unix.SOCK_DGRAM, int(htons(unix.ETH_P_IP)))
	if err != nil {
		return err
	}
	replies, err := unix.Socket(unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_ICMP)
	if err != nil {
		return err
	}
	if err := unix.Bind(replies, &unix.SockaddrInet4{Addr: source.As4()}); err != nil {
		return err
	}
	fmt.Println("spoofing")
	buf := make([]byte, 1500)
	for forged := 1; ; {
		n, _, err := unix.Recvfrom(packets, buf, 0)
		if err != nil {
			return err
		}
		from, echo, ok := request(buf[:n], target)
		if !ok {
			continue
		}
		if dropPayload {
			echo.Data = nil
		}
		reply, err := (&icmp.Message{Type: ipv4.ICMPTypeEchoReply, Body: echo}).Marshal(nil)
		if err != nil {
			return err
		}
		if err := unix.Sendto(replies, reply, 0, &unix.SockaddrInet4{Addr: from.As4()}); err != nil {
			return err
		}
		fmt.Printf("forged %d\n", forged)
		forged++
	}
}

// request reads an IPv4 packet: an ICMP echo request to target, from whom.
func request(packet []byte, target netip.Addr) (netip.Addr, *icmp.Echo, bool) {
	if len(packet) < 20 || packet[9] != unix.IPPROTO_ICMP || netip.AddrFrom4([4]byte(packet[16:20])) != target {
		return netip.Addr{}, nil, false
	}
	message, err := icmp.ParseMessage(1, packet[int(packet[0]&0x0f)*4:])
	if err != nil || message.Type != ipv4.ICMPTypeEcho {
		return netip.Addr{}, nil, false
	}
	return netip.AddrFrom4([4]byte(packet[12:16])), message.Body.(*icmp.Echo), true
}

func htons(v uint16) uint16 {
	return binary.BigEndian.Uint16(binary.NativeEndian.AppendUint16(nil, v))
}
