package scenario

import (
	"github.com/flannel-dns/flannel-dns/src/e2e/timeline"
)

// Timeline is what the scenario's image shows: each step's start as an event, the probe's buckets over
// the steps' windows, and per worker the flanneld PID seen at the end of each step, drawn from the end of
// the step before (or the start of the step in which the worker first appears).
func Timeline(steps []Step, probe []timeline.Bucket) timeline.Data {
	if len(steps) == 0 {
		return timeline.Data{}
	}
	d := timeline.Data{Title: "flannel-dns on a simulated CFCR cluster: master steps, pod probe, flanneld PIDs",
		Start: steps[0].Start, End: steps[len(steps)-1].End}
	lanes := map[string]int{}
	for _, s := range steps {
		d.Events = append(d.Events, timeline.Event{At: s.Start, Label: s.Name})
		for _, w := range s.Workers {
			i, seen := lanes[w.Name]
			if !seen {
				i = len(d.Workers)
				lanes[w.Name] = i
				d.Workers = append(d.Workers, timeline.Lane{Name: w.Name})
			}
			from := s.Start
			if spans := d.Workers[i].Spans; len(spans) > 0 {
				from = spans[len(spans)-1].To
			}
			d.Workers[i].Spans = append(d.Workers[i].Spans, timeline.Span{From: from, To: s.End, PID: w.FlanneldPID})
		}
	}
	for _, b := range probe {
		if b.Start.Add(b.Width).After(d.Start) && b.Start.Before(d.End) {
			d.Probe = append(d.Probe, b)
		}
	}
	return d
}
