package timeline_test

import (
	"image"
	"image/png"
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/flannel-dns/flannel-dns/src/e2e/timeline"
)

var start = time.Date(2026, 12, 2, 16, 0, 0, 0, time.UTC)

func at(seconds float64) time.Time { return start.Add(time.Duration(seconds * float64(time.Second))) }

// sample is a two-minute run: two steps, a probe bucket per second with RTTs around 1 ms and no loss,
// two workers whose flanneld keeps its PID.
func sample() timeline.Data {
	d := timeline.Data{Title: "sample", Start: start, End: at(120),
		Events: []timeline.Event{{At: at(0), Label: "deploy"}, {At: at(60), Label: "scale masters 3->2"}}}
	for s := 0; s < 120; s++ {
		d.Probe = append(d.Probe, timeline.Bucket{Start: at(float64(s)), Width: time.Second, Sent: 100,
			RTTMin: 300 * time.Microsecond, RTTMedian: time.Millisecond, RTTMax: 2 * time.Millisecond})
	}
	for _, name := range []string{"worker/0", "worker/1"} {
		d.Workers = append(d.Workers, timeline.Lane{Name: name, Spans: []timeline.Span{
			{From: at(0), To: at(60), PID: 4000}, {From: at(60), To: at(120), PID: 4000}}})
	}
	return d
}

func render(d timeline.Data) image.Image {
	path := filepath.Join(GinkgoT().TempDir(), "timeline.png")
	Expect(timeline.WritePNG(path, d)).To(Succeed())
	f, err := os.Open(path)
	Expect(err).NotTo(HaveOccurred())
	defer f.Close()
	img, err := png.Decode(f)
	Expect(err).NotTo(HaveOccurred())
	return img
}

// differing counts the pixels inside r whose colours differ between a and b.
func differing(a, b image.Image, r image.Rectangle) int {
	n := 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if a.At(x, y) != b.At(x, y) {
				n++
			}
		}
	}
	return n
}

// colours counts the distinct colours inside r.
func colours(img image.Image, r image.Rectangle) int {
	seen := map[any]bool{}
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			seen[img.At(x, y)] = true
		}
	}
	return len(seen)
}

var _ = Describe("the timeline image", func() {
	panels := timeline.Panels()

	It("is a PNG of the documented size with something drawn in every panel", func() {
		img := render(sample())
		Expect(img.Bounds().Size()).To(Equal(image.Pt(timeline.Width, timeline.Height)))
		for name, r := range panels {
			Expect(colours(img, r)).To(BeNumerically(">", 2), name)
		}
	})

	It("changes a worker's lane, and only the PID panel, when its flanneld PID changes", func() {
		restarted := sample()
		restarted.Workers[1].Spans[1].PID = 4100
		a, b := render(sample()), render(restarted)
		Expect(differing(a, b, panels[timeline.PanelPIDs])).To(BeNumerically(">", 100))
		Expect(differing(a, b, panels[timeline.PanelRTT])).To(BeZero())
		Expect(differing(a, b, panels[timeline.PanelLoss])).To(BeZero())
	})

	It("changes the loss panel, and not the lanes, when datagrams are lost", func() {
		lossy := sample()
		for i := 70; i < 75; i++ {
			lossy.Probe[i].Lost = 40
		}
		a, b := render(sample()), render(lossy)
		Expect(differing(a, b, panels[timeline.PanelLoss])).To(BeNumerically(">", 100))
		Expect(differing(a, b, panels[timeline.PanelPIDs])).To(BeZero())
	})

	It("draws RTT spikes in the RTT panel", func() {
		slow := sample()
		slow.Probe[30].RTTMax = 50 * time.Millisecond
		Expect(differing(render(sample()), render(slow), panels[timeline.PanelRTT])).To(BeNumerically(">", 100))
	})

	It("draws a vertical line for each event through the panels", func() {
		more := sample()
		more.Events = append(more.Events, timeline.Event{At: at(90), Label: "replace master/1"})
		a, b := render(sample()), render(more)
		for _, name := range []string{timeline.PanelEvents, timeline.PanelRTT, timeline.PanelLoss, timeline.PanelPIDs} {
			Expect(differing(a, b, panels[name])).To(BeNumerically(">", 20), name)
		}
	})

	It("refuses a timeline that ends before it starts, naming both times", func() {
		d := sample()
		d.End = d.Start.Add(-time.Second)
		_, err := timeline.Draw(d)
		Expect(err).To(MatchError(ContainSubstring("ends (2026-12-02T15:59:59Z) before it starts (2026-12-02T16:00:00Z)")))
	})
})
