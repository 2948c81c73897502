package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"

	"github.com/flannel-dns/flannel-dns/src/e2e/procstats"
	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/config"
	"github.com/flannel-dns/flannel-dns/src/testenv/recordingflanneld/record"
)

// launcher is one launcher process of a herd, with recordingflanneld as its flanneld.
type launcher struct {
	dir     string
	cmd     *exec.Cmd
	started time.Time
	exec    time.Time // flanneld's first instruction, from its record
	exited  chan struct{}
	status  int // when exited
	cpu     time.Duration
}

func (l *launcher) recordFile() string { return filepath.Join(l.dir, "record.json") }
func (l *launcher) logFile() string    { return filepath.Join(l.dir, "launcher.log") }

// herdResult is one herd of launchers: their starts and what etcd did meanwhile.
type herdResult struct {
	n            int
	startToRun   []time.Duration // start to flanneld's exec, of those that got there
	gaveUp       int             // exited before flanneld started
	notYet       int             // neither within the limit
	retried      int             // launchers that logged at least one failed attempt
	leftOut      int             // member probes that left a member out of flanneld's endpoints
	launcherCPU  []time.Duration
	etcd         phase
	configWrites int64 // the network config key's version: puts since it was created
}

// launcherConfig is a launcher's config: the harness's etcd and DNS server, recordingflanneld as flanneld,
// the default timings.
func (h *harness) launcherConfig(prefix, dir string) config.Config {
	cfg := config.Default()
	cfg.Etcd = config.Etcd{Alias: h.etcd.alias, Port: h.etcd.port, Prefix: prefix,
		CAFile: h.ca.CertFile, CertFile: h.client.CertFile, KeyFile: h.client.KeyFile}
	cfg.DNS.Server = h.dns.Addr
	cfg.Network.CIDR = podNetwork
	cfg.Flanneld.Path = h.flanneld
	cfg.Flanneld.Iface = "lo"
	cfg.Flanneld.SubnetFile = filepath.Join(dir, "subnet.env")
	return cfg
}

// podNetwork is the launchers' network config, and the one kubo's way writes.
const podNetwork = "198.18.0.0/16"

func writeConfig(path string, cfg config.Config) error {
	data, err := json.Marshal(cfg)
	if err != nil {
		return bosherr.WrapError(err, "Encoding a launcher config")
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return bosherr.WrapErrorf(err, "Writing %s", path)
	}
	return nil
}

// prepareHerd makes n launcher directories with their configs under dir, all for the same network config key.
func (h *harness) prepareHerd(dir, prefix string, n int) ([]*launcher, error) {
	herd := make([]*launcher, n)
	for i := range herd {
		l := &launcher{dir: filepath.Join(dir, fmt.Sprintf("launcher-%03d", i)), exited: make(chan struct{})}
		if err := os.MkdirAll(l.dir, 0o755); err != nil {
			return nil, bosherr.WrapErrorf(err, "Creating %s", l.dir)
		}
		if err := writeConfig(filepath.Join(l.dir, "config.json"), h.launcherConfig(prefix, l.dir)); err != nil {
			return nil, err
		}
		herd[i] = l
	}
	return herd, nil
}

// start runs the launcher with its config; its log goes to its directory.
func (h *harness) start(l *launcher) error {
	log, err := os.Create(l.logFile())
	if err != nil {
		return bosherr.WrapErrorf(err, "Creating %s", l.logFile())
	}
	defer log.Close()
	l.cmd = exec.Command(h.launcher, "run", "--config", filepath.Join(l.dir, "config.json"))
	l.cmd.Env = append(os.Environ(), record.FileEnv+"="+l.recordFile())
	l.cmd.Stdout, l.cmd.Stderr = log, log
	l.started = time.Now()
	if err := l.cmd.Start(); err != nil {
		return bosherr.WrapError(err, "Starting a launcher")
	}
	go func() {
		_ = l.cmd.Wait() // the status says it
		l.status = l.cmd.ProcessState.ExitCode()
		close(l.exited)
	}()
	return nil
}

// startSpread starts each of the items within spread, evenly.
func startSpread[T any](items []T, spread time.Duration, start func(T) error) error {
	begin := time.Now()
	for i, item := range items {
		time.Sleep(time.Until(begin.Add(spread * time.Duration(i) / time.Duration(len(items)))))
		if err := start(item); err != nil {
			return err
		}
	}
	return nil
}

// runHerd starts n launchers within spread and waits until each has started flanneld or given up, at most limit.
// The launchers keep running (flanneld with them) until stopHerd.
func (h *harness) runHerd(n int, spread, limit time.Duration) (herdResult, []*launcher, error) {
	prefix := fmt.Sprintf("/herd-%d/coreos.com/network", n)
	herd, err := h.prepareHerd(filepath.Join(h.dir, fmt.Sprintf("herd-%d", n)), prefix, n)
	if err != nil {
		return herdResult{}, nil, err
	}
	if err := h.seedLeases(prefix, n); err != nil {
		return herdResult{}, nil, err
	}
	leader, err := h.etcd.waitLeader()
	if err != nil {
		return herdResult{}, nil, err
	}
	samples := h.etcd.sample()
	err = startSpread(herd, spread, h.start)
	waitForFlanneld(herd, limit)
	readLauncherCPU(herd)
	time.Sleep(time.Second) // requests still in flight when the last one started flanneld
	readings := samples.finish(h.etcd)
	if err != nil {
		return herdResult{}, herd, err
	}
	result := herdResult{n: n, etcd: summarize(readings, leader)}
	for _, l := range herd {
		result.add(l)
	}
	result.configWrites, err = h.configVersion(prefix + "/config")
	return result, herd, err
}

// seedLeases writes n subnet leases as flanneld 0.28 writes them, as after a power cut: every node held one,
// and a launcher reads them all when its VM has no vxlan device yet (package vtep). None names this host.
func (h *harness) seedLeases(prefix string, n int) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for i := range n {
		key := fmt.Sprintf("%s/subnets/198.18.%d.0-24", prefix, i%256)
		value := fmt.Sprintf(`{"PublicIP":"198.51.100.%d","PublicIPv6":null,"BackendType":"vxlan",`+
			`"BackendData":{"VNI":1,"VtepMAC":"02:42:c6:12:00:%02x"}}`, i%250+1, i%256)
		if _, err := h.kv.Put(ctx, key, value); err != nil {
			return bosherr.WrapErrorf(err, "Writing the lease %s", key)
		}
	}
	return nil
}

// waitForFlanneld polls the records until every launcher has started flanneld or exited, or limit passes.
func waitForFlanneld(herd []*launcher, limit time.Duration) {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		pending := 0
		for _, l := range herd {
			if !l.exec.IsZero() || isClosed(l.exited) {
				continue
			}
			if rec, err := record.Read(l.recordFile()); err == nil {
				l.exec = time.Unix(0, rec.Started)
				continue
			}
			pending++
		}
		if pending == 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// readLauncherCPU takes each running launcher's CPU time so far: its start-up, and a few ms beside flanneld. It
// is the scheduler's count, not /proc/<pid>/stat's 10 ms ticks, which round a start's few ms down to nothing.
func readLauncherCPU(herd []*launcher) {
	for _, l := range herd {
		if l.cmd != nil && !isClosed(l.exited) {
			l.cpu, _ = procstats.OnCPU(l.cmd.Process.Pid) // gone meanwhile: it shows as gave up
		}
	}
}

func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func (r *herdResult) add(l *launcher) {
	log, _ := os.ReadFile(l.logFile()) // no log: nothing counted from it
	if bytes.Contains(log, []byte("reaching etcd failed, retrying")) {
		r.retried++
	}
	r.leftOut += bytes.Count(log, []byte("is left out"))
	switch {
	case !l.exec.IsZero():
		r.startToRun = append(r.startToRun, l.exec.Sub(l.started))
		r.launcherCPU = append(r.launcherCPU, l.cpu)
	case isClosed(l.exited):
		r.gaveUp++
	default:
		r.notYet++
	}
}

// stopHerd sends SIGTERM to every launcher still running (it passes it on to flanneld) and waits for them.
func stopHerd(herd []*launcher) {
	for _, l := range herd {
		if l.cmd != nil && l.cmd.Process != nil && !isClosed(l.exited) {
			_ = l.cmd.Process.Signal(syscall.SIGTERM) // exited meanwhile is fine
		}
	}
	for _, l := range herd {
		if l.cmd != nil {
			select {
			case <-l.exited:
			case <-time.After(30 * time.Second):
				_ = l.cmd.Process.Kill() // the launcher's own kill-after is shorter; this is a last resort
			}
		}
	}
}

// configVersion is how many times the key was written since it was created (0: absent).
func (h *harness) configVersion(key string) (int64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := h.kv.Get(ctx, key)
	if err != nil {
		return 0, bosherr.WrapErrorf(err, "Reading %s", key)
	}
	if len(resp.Kvs) == 0 {
		return 0, nil
	}
	return resp.Kvs[0].Version, nil
}
