package keepalive

import (
	"errors"

	"golang.org/x/sys/unix"
)

// errFamilyOff is what opening a socket of an address family the kernel lacks gives: IPv6 on every BOSH
// stemcell, whose kernel boots with ipv6.disable=1.
var errFamilyOff = errors.New("address family not supported by the kernel")

// familyError returns errFamilyOff when the socket call failed with EAFNOSUPPORT, else wrapped. The check is
// made on the bare cause because bosh-utils' wrapped errors do not unwrap for errors.Is.
func familyError(cause, wrapped error) error {
	if errors.Is(cause, unix.EAFNOSUPPORT) {
		return errFamilyOff
	}
	return wrapped
}
