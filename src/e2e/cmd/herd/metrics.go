package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"

	"github.com/flannel-dns/flannel-dns/src/e2e/etcdmetrics"
	"github.com/flannel-dns/flannel-dns/src/e2e/procstats"
)

var metricsClient = &http.Client{Timeout: 5 * time.Second}

func scrape(ctx context.Context, url string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", bosherr.WrapErrorf(err, "Asking %s", url)
	}
	resp, err := metricsClient.Do(req)
	if err != nil {
		return "", bosherr.WrapErrorf(err, "Reading %s", url)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		return "", bosherr.Errorf("Reading %s: status %s, %v", url, resp.Status, err)
	}
	return string(body), nil
}

type snapshot struct{ etcdmetrics.Snapshot }

func (s snapshot) gauge(name string) float64 { return s.Sum(name, nil) }

func readMetrics(ctx context.Context, m *member) (snapshot, error) {
	text, err := scrape(ctx, m.metricsURL()+"/metrics")
	if err != nil {
		return snapshot{}, err
	}
	snap, err := etcdmetrics.Parse(strings.NewReader(text))
	return snapshot{snap}, err
}

// reading is every live member's metrics at one moment, with each member's CPU time. A killed member has
// none: its counters start from zero when it comes back, so phases compare members that lived throughout.
type reading struct {
	at      time.Time
	members []snapshot      // by member index; nil Snapshot: not running
	cpu     []time.Duration // by member index
}

func (e *etcd) read(ctx context.Context) reading {
	r := reading{at: time.Now(), members: make([]snapshot, len(e.members)), cpu: make([]time.Duration, len(e.members))}
	var wg sync.WaitGroup
	for i, m := range e.members {
		if m.cmd == nil {
			continue
		}
		pid := m.cmd.Process.Pid
		wg.Go(func() {
			r.cpu[i], _ = procstats.CPUTime(pid) // a member that died meanwhile reads as zero
			r.members[i], _ = readMetrics(ctx, m)
		})
	}
	wg.Wait()
	return r
}

// started is grpc_server_started_total summed over the members that both readings have.
func started(before, after reading) etcdmetrics.Counts {
	total := etcdmetrics.Counts{}
	for i := range after.members {
		if before.members[i].Snapshot == nil || after.members[i].Snapshot == nil {
			continue
		}
		total = total.Plus(after.members[i].Started().Minus(before.members[i].Started()))
	}
	return total
}

// histogram is one histogram's observations between the readings, over the members both have.
func histogram(before, after reading, name string, match etcdmetrics.Labels) etcdmetrics.Histogram {
	var h etcdmetrics.Histogram
	for i := range after.members {
		if before.members[i].Snapshot == nil || after.members[i].Snapshot == nil {
			continue
		}
		h = h.Plus(after.members[i].Histogram(name, match).Minus(before.members[i].Histogram(name, match)))
	}
	return h
}

// memberHistogram is one member's histogram between the readings.
func memberHistogram(before, after reading, i int, name string) etcdmetrics.Histogram {
	if before.members[i].Snapshot == nil || after.members[i].Snapshot == nil {
		return etcdmetrics.Histogram{}
	}
	return after.members[i].Histogram(name, nil).Minus(before.members[i].Histogram(name, nil))
}

// sampler reads the cluster every second while a phase runs, for the peak rate of requests and the peak CPU.
type sampler struct {
	readings []reading
	stop     chan struct{}
	done     chan struct{}
}

func (e *etcd) sample() *sampler {
	s := &sampler{stop: make(chan struct{}), done: make(chan struct{})}
	s.readings = append(s.readings, e.read(context.Background()))
	go func() {
		defer close(s.done)
		ticker := time.NewTicker(time.Second)
		defer ticker.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-ticker.C:
				s.readings = append(s.readings, e.read(context.Background()))
			}
		}
	}()
	return s
}

// finish takes a last reading and returns them all, the first and last bounding the phase.
func (s *sampler) finish(e *etcd) []reading {
	close(s.stop)
	<-s.done
	return append(s.readings, e.read(context.Background()))
}

// phase is what etcd did between the first and last of a phase's readings.
type phase struct {
	duration        time.Duration
	requests        etcdmetrics.Counts
	peakRate        float64 // requests started per second, the busiest second
	leader          int
	leaderCPU       time.Duration
	leaderPeakCPU   float64 // share of one core, the busiest second
	membersCPU      time.Duration
	unary           etcdmetrics.Histogram // grpc_server_handling_seconds of unary calls, all members
	byMethod        map[string]etcdmetrics.Histogram
	walFsync        etcdmetrics.Histogram // the leader's
	backendCommit   etcdmetrics.Histogram // the leader's
	proposalsFailed float64
}

func summarize(readings []reading, leader int) phase {
	first, last := readings[0], readings[len(readings)-1]
	p := phase{duration: last.at.Sub(first.at), requests: started(first, last), leader: leader}
	for i := 1; i < len(readings); i++ {
		prev, cur := readings[i-1], readings[i]
		seconds := cur.at.Sub(prev.at).Seconds()
		p.peakRate = max(p.peakRate, started(prev, cur).Total()/seconds)
		if leader >= 0 && prev.cpu[leader] > 0 && cur.cpu[leader] > 0 {
			p.leaderPeakCPU = max(p.leaderPeakCPU, (cur.cpu[leader]-prev.cpu[leader]).Seconds()/seconds)
		}
	}
	for i := range last.cpu {
		if first.cpu[i] > 0 && last.cpu[i] > 0 {
			p.membersCPU += last.cpu[i] - first.cpu[i]
		}
	}
	if leader >= 0 {
		if first.cpu[leader] > 0 {
			p.leaderCPU = last.cpu[leader] - first.cpu[leader]
		}
		p.walFsync = memberHistogram(first, last, leader, "etcd_disk_wal_fsync_duration_seconds")
		p.backendCommit = memberHistogram(first, last, leader, "etcd_disk_backend_commit_duration_seconds")
	}
	p.unary = histogram(first, last, "grpc_server_handling_seconds", etcdmetrics.Unary)
	p.byMethod = map[string]etcdmetrics.Histogram{}
	for _, m := range p.requests.Methods() {
		service, method, _ := strings.Cut(m, "/")
		p.byMethod[m] = histogram(first, last, "grpc_server_handling_seconds", func(l map[string]string) bool {
			return etcdmetrics.Unary(l) && l["grpc_service"] == service && l["grpc_method"] == method
		})
	}
	for i := range last.members {
		if first.members[i].Snapshot != nil && last.members[i].Snapshot != nil {
			p.proposalsFailed += last.members[i].gauge("etcd_server_proposals_failed_total") - first.members[i].gauge("etcd_server_proposals_failed_total")
		}
	}
	return p
}
