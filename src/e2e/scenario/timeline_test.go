package scenario_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/flannel-dns/flannel-dns/src/e2e/scenario"
	"github.com/flannel-dns/flannel-dns/src/e2e/timeline"
)

var _ = Describe("the scenario's timeline", func() {
	t0 := time.Date(2026, 12, 2, 16, 0, 0, 0, time.UTC)
	w := func(name string, pid int) scenario.WorkerState {
		return scenario.WorkerState{Name: name, FlanneldPID: pid}
	}
	steps := []scenario.Step{
		{Name: "deploy", Start: t0, End: t0.Add(20 * time.Second), Workers: []scenario.WorkerState{w("worker/0", 10), w("worker/1", 11)}},
		{Name: "scale", Start: t0.Add(22 * time.Second), End: t0.Add(40 * time.Second), Workers: []scenario.WorkerState{w("worker/0", 10), w("worker/1", 12)}},
		{Name: "add worker/2", Start: t0.Add(42 * time.Second), End: t0.Add(60 * time.Second),
			Workers: []scenario.WorkerState{w("worker/0", 10), w("worker/1", 12), w("worker/2", 13)}},
	}

	It("has an event per step, a lane per worker in order of appearance, and a span per step that joins the one before", func() {
		d := scenario.Timeline(steps, nil)
		Expect(d.Start).To(Equal(t0))
		Expect(d.End).To(Equal(t0.Add(60 * time.Second)))
		Expect(d.Events).To(HaveLen(3))
		Expect(d.Events[1]).To(Equal(timeline.Event{At: t0.Add(22 * time.Second), Label: "scale"}))
		Expect(d.Workers).To(HaveLen(3))
		Expect(d.Workers[1].Name).To(Equal("worker/1"))
		Expect(d.Workers[1].Spans).To(Equal([]timeline.Span{
			{From: t0, To: t0.Add(20 * time.Second), PID: 11},
			{From: t0.Add(20 * time.Second), To: t0.Add(40 * time.Second), PID: 12},
			{From: t0.Add(40 * time.Second), To: t0.Add(60 * time.Second), PID: 12},
		}))
		Expect(d.Workers[2].Spans).To(Equal([]timeline.Span{{From: t0.Add(42 * time.Second), To: t0.Add(60 * time.Second), PID: 13}}))
	})

	It("keeps only the probe buckets that overlap the steps", func() {
		var buckets []timeline.Bucket
		for s := -5; s < 70; s++ {
			buckets = append(buckets, timeline.Bucket{Start: t0.Add(time.Duration(s) * time.Second), Width: time.Second, Sent: 1})
		}
		d := scenario.Timeline(steps, buckets)
		Expect(d.Probe).To(HaveLen(60))
		Expect(d.Probe[0].Start).To(Equal(t0))
	})
})
