package members

import (
	"net"
	"net/url"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
)

// CheckClientURL accepts a member's client URL only as https://host:port (an IPv6 address in brackets): etcd
// lists the URLs a member was started with, http ones too, and the etcd client would ask an http one in clear
// text, as flanneld would.
func CheckClientURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "https" || u.Opaque != "" || u.User != nil || u.Path != "" || u.RawPath != "" ||
		u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return errNotHTTPS
	}
	host, port, err := net.SplitHostPort(u.Host)
	if err != nil || host == "" || port == "" {
		return errNotHTTPS
	}
	return nil
}

var errNotHTTPS = bosherr.Error("its client URL is not of the form https://host:port")

// clientURL is the first of a member's client URLs that CheckClientURL accepts; when none is, the first one,
// without a password, and why it is refused.
func clientURL(urls []string) (string, error) {
	for _, raw := range urls {
		if CheckClientURL(raw) == nil {
			return raw, nil
		}
	}
	if u, err := url.Parse(urls[0]); err == nil {
		return u.Redacted(), errNotHTTPS
	}
	return "", errNotHTTPS
}
