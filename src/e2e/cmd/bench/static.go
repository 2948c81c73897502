package main

import (
	"os"
	"path"
	"time"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
	"go.yaml.in/yaml/v3"

	"github.com/flannel-dns/flannel-dns/src/e2e/cluster"
	"github.com/flannel-dns/flannel-dns/src/e2e/monit"
	"github.com/flannel-dns/flannel-dns/src/e2e/procstats"
	"github.com/flannel-dns/flannel-dns/src/e2e/worker"
)

// The kubo-v0.21-style variant runs as a second process of the worker's flanneld job under the same bpm:
// flanneld itself, given every member's URL, with the launcher's capabilities and volumes.
const (
	staticName    = "static"
	staticPIDFile = "/var/vcap/sys/run/bpm/flanneld/" + staticName + ".pid"
	bpmConfig     = "config/bpm.yml"
)

// addStatic adds the static process to the bpm.yml of every worker's flanneld job.
func addStatic(c *cluster.Cluster) error {
	for _, w := range c.Workers() {
		args, err := staticArgs(c, w)
		if err != nil {
			return err
		}
		if err := addStaticProcess(w, args); err != nil {
			return bosherr.WrapErrorf(err, "Adding the static process to the flanneld job of %s", w.Name)
		}
	}
	return nil
}

// addStaticProcess copies the job's first bpm process as the static one, with flanneld and args to run.
func addStaticProcess(w *worker.Worker, args []string) error {
	dir, err := os.Readlink(w.Path("/var/vcap/jobs/flanneld"))
	if err != nil {
		return err
	}
	if !path.IsAbs(dir) { // the agent's links are relative to their directory
		dir = path.Join("/var/vcap/jobs", dir)
	}
	file := w.Path(path.Join(dir, bpmConfig))
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	var cfg struct {
		Processes []map[string]any `yaml:"processes"`
	}
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		return err
	}
	if len(cfg.Processes) != 1 {
		return bosherr.Errorf("%d processes in %s, expected only the launcher's", len(cfg.Processes), bpmConfig)
	}
	static := map[string]any{}
	for key, value := range cfg.Processes[0] {
		static[key] = value
	}
	static["name"], static["executable"], static["args"] = staticName, flanneldBin, args
	cfg.Processes = append(cfg.Processes, static)
	if data, err = yaml.Marshal(cfg); err != nil {
		return err
	}
	return os.WriteFile(file, data, 0o640)
}

// startStatic stops whatever flanneld runs on w and starts the static process with bpm start, the whole of
// kubo-release v0.21's start beside the launcher's bin/start.
func startStatic(w *worker.Worker) (startup, error) {
	s := startup{worker: w.Name, variant: staticVariant}
	if _, err := stopFlanneld(w); err != nil {
		return s, err
	}
	offset := fileSize(w.Path(staticLog))
	starting := time.Now()
	if _, err := w.VM.Run(bpmBin, "start", "flanneld", "-p", staticName); err != nil {
		return s, err
	}
	if err := waitForSubnet(w); err != nil {
		return s, err
	}
	var err error
	if s.program, err = subnetWritten(w, flanneldSubnetFile, starting); err != nil {
		return s, err
	}
	flanneldStart, err := procstats.Start(staticPID(w))
	s.bpmExec = flanneldStart.Sub(starting)
	if err != nil {
		return s, err
	}
	s.phases, err = phases(w.Path(staticLog), offset, flanneldStart)
	return s, err
}

// staticPID is the static flanneld's process ID: the process bpm's pidfile names, or its child under bpm 1.1
// and later, whose container init sits above it.
func staticPID(w *worker.Worker) int { return worker.FlanneldOf(monit.PID(w.Path(staticPIDFile))) }
