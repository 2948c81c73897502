package agent

import (
	"os"
	"path/filepath"
	"syscall"
	"time"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
)

// healthFile is where the agent says how the instance is; bosh-dns's health server reads it.
const healthFile = "/var/vcap/instance/health.json"

// recordsFile is where the agent puts the DNS records of the deployment that the director pushes.
const recordsFile = "/var/vcap/instance/dns/records.json"

// keepHealth writes health.json whenever the instance's state changes: running when every process monit
// checks runs, failing otherwise. The real agent writes it on its heartbeat; every interval here.
func (a *Agent) keepHealth(interval time.Duration) {
	last := ""
	for {
		state := "running"
		if len(a.NotRunning()) > 0 {
			state = "failing"
		}
		if state != last && writeAtomically(a.VM.Path(healthFile), []byte(`{"state":"`+state+`"}`)) == nil {
			last = state
		}
		select {
		case <-a.health:
			return
		case <-time.After(interval):
		}
	}
}

// SyncDNS writes the records the director pushes, as its sync_dns does; bosh-dns picks them up by itself.
func (a *Agent) SyncDNS(records []byte) error {
	if err := writeAtomically(a.VM.Path(recordsFile), records); err != nil {
		return bosherr.WrapErrorf(err, "Writing DNS records on %s", a.VM.Name)
	}
	return nil
}

func writeAtomically(path string, content []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, content, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func killGroup(pgid int) error { return syscall.Kill(-pgid, syscall.SIGKILL) }
