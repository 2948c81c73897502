package agent

import (
	"os"
	"path/filepath"
	"time"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
)

// healthFile is where the agent says how the instance is; bosh-dns's health server reads it.
const healthFile = "/var/vcap/instance/health.json"

// recordsFile is where the agent puts the DNS records of the deployment that the director pushes.
const recordsFile = "/var/vcap/instance/dns/records.json"

// Health is one write of health.json.
type Health struct {
	At    time.Time
	State string
}

// heartbeat writes health.json from monit's view every interval, as the agent does with each heartbeat.
func (a *Agent) heartbeat(interval time.Duration) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-a.halt:
			return
		case <-tick.C:
			a.mu.Lock()
			off := a.off
			a.mu.Unlock()
			if !off {
				a.recordHealth()
			}
		}
	}
}

// recordHealth writes the instance's state into health.json, as the agent does on each heartbeat and after
// it starts, stops or unmonitors the jobs.
func (a *Agent) recordHealth() {
	state := a.Status()
	if err := writeAtomically(a.VM.Path(healthFile), []byte(`{"state":"`+state+`"}`)); err != nil {
		a.logf("writing health.json: %v", err)
		return
	}
	a.mu.Lock()
	a.health = append(a.health, Health{At: time.Now(), State: state})
	a.mu.Unlock()
}

// HealthSince lists the writes of health.json since t.
func (a *Agent) HealthSince(t time.Time) []Health {
	a.mu.Lock()
	defer a.mu.Unlock()
	var since []Health
	for _, h := range a.health {
		if !h.At.Before(t) {
			since = append(since, h)
		}
	}
	return since
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
