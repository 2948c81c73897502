package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// kuboResult is n nodes starting kubo's way: flanneld_ctl wrote the network config with an unconditional
// `etcdctl set` on every start, listing every member. Here each node is an etcdctl 3.6 process doing the v3
// equivalent, `etcdctl put`, with the members' URLs and the same client certificate.
type kuboResult struct {
	n            int
	startToDone  []time.Duration // etcdctl's start to its exit, of the puts that succeeded
	cpu          []time.Duration // each etcdctl's user + system time
	failed       int
	failures     []string
	etcd         phase
	configWrites int64
}

type put struct {
	cmd      *exec.Cmd
	started  time.Time
	duration time.Duration
	cpu      time.Duration
	output   []byte
	err      error
}

func (h *harness) runKubo(n int, spread time.Duration) (kuboResult, error) {
	key := fmt.Sprintf("/kubo-%d/coreos.com/network/config", n)
	value := string(h.launcherConfig("", h.dir).Network.Desired())
	puts := make([]*put, n)
	for i := range puts {
		puts[i] = &put{cmd: exec.Command(filepath.Join(h.etcdBin, "etcdctl"),
			"--endpoints", strings.Join(h.etcd.endpoints(), ","),
			"--cacert", h.ca.CertFile, "--cert", h.client.CertFile, "--key", h.client.KeyFile,
			"put", key, value)}
	}
	leader, err := h.etcd.waitLeader()
	if err != nil {
		return kuboResult{}, err
	}
	samples := h.etcd.sample()
	var running sync.WaitGroup
	err = startSpread(puts, spread, func(p *put) error {
		p.started = time.Now()
		running.Go(func() {
			p.output, p.err = p.cmd.CombinedOutput()
			p.duration = time.Since(p.started)
			if state := p.cmd.ProcessState; state != nil {
				p.cpu = state.UserTime() + state.SystemTime()
			}
		})
		return nil
	})
	running.Wait()
	time.Sleep(time.Second)
	readings := samples.finish(h.etcd)
	if err != nil {
		return kuboResult{}, err
	}
	result := kuboResult{n: n, etcd: summarize(readings, leader)}
	for _, p := range puts {
		if p.err != nil {
			result.failed++
			result.failures = append(result.failures, fmt.Sprintf("%s: %s", p.err, strings.TrimSpace(string(p.output))))
			continue
		}
		result.startToDone = append(result.startToDone, p.duration)
		result.cpu = append(result.cpu, p.cpu)
	}
	result.configWrites, err = h.configVersion(key)
	return result, err
}
