package keepalive

import (
	"errors"

	"golang.org/x/sys/unix"
)

// errFamilyOff is what opening a socket of an address family the kernel lacks gives: IPv6 on every BOSH
// stemcell, whose kernel boots with ipv6.disable=1.
var errFamilyOff = errors.New("address family not supported by the kernel")

// familyError returns errFamilyOff when cause, the socket call's error, is EAFNOSUPPORT, else wrapped: like
// refused (tuner.go), it judges the bare cause, which bosh-utils' wrapping hides from errors.Is.
func familyError(wrapped, cause error) error {
	if errors.Is(cause, unix.EAFNOSUPPORT) {
		return errFamilyOff
	}
	return wrapped
}
