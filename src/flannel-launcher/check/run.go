package check

import (
	"context"
	"errors"
	"io"
	"time"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
	boshlog "github.com/cloudfoundry/bosh-utils/logger"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/config"
	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/resolve"
)

// Run gathers the report through the configured DNS servers and writes it to out. The error is
// ErrNotReady when the report says flanneld could not start now.
func Run(cfg config.Config, asJSON bool, out io.Writer, logger boshlog.Logger) error {
	resolver, err := resolve.New(cfg.DNS, cfg.Timing.DNSTimeout.D())
	if err != nil {
		return bosherr.WrapError(err, "Setting up the DNS resolver")
	}
	resolver.Logger = logger
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	report := Gather(ctx, cfg, resolver, logger)
	write := report.WriteTable
	if asJSON {
		write = report.WriteJSON
	}
	if err := write(out); err != nil {
		return bosherr.WrapError(err, "Writing the report")
	}
	if !report.Ready {
		return ErrNotReady
	}
	return nil
}

// timeout bounds the whole check; each DNS query and probe has its own, shorter one.
const timeout = 30 * time.Second

// ErrNotReady: the report lists why flanneld could not start now.
var ErrNotReady = errors.New("not ready: flanneld could not start now")
