// Package timeline draws what happened during an e2e scenario as one PNG with a shared time axis: the
// steps as vertical lines, the pod probe's round-trip times and loss per time bucket, and a lane per worker
// labelled with its flanneld PID. It only turns data into an image; the scenario collects the data.
package timeline

import (
	"image"
	"image/png"
	"math"
	"os"
	"strconv"
	"time"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Data is everything the image shows. Times before Start or after End are cut off.
type Data struct {
	Title      string
	Start, End time.Time
	Events     []Event
	Probe      []Bucket
	Workers    []Lane
}

// Event is a labelled instant, drawn as a vertical line through every panel.
type Event struct {
	At    time.Time
	Label string
}

// Bucket is the pod probe's record of the datagrams sent in [Start, Start+Width).
type Bucket struct {
	Start                     time.Time
	Width                     time.Duration
	Sent, Lost                int
	RTTMin, RTTMedian, RTTMax time.Duration // zero when no echo came back
}

// Lane is one worker's flanneld over time.
type Lane struct {
	Name  string
	Spans []Span
}

// Span is a stretch of time in which a worker's flanneld had one PID (0: none running).
type Span struct {
	From, To time.Time
	PID      int
}

// Image size in pixels.
const (
	Width  = 1600
	Height = 1000
	dpi    = 96
)

// Panel names, top to bottom, with the share of the height each one takes.
const (
	PanelEvents = "events"
	PanelRTT    = "rtt"
	PanelLoss   = "loss"
	PanelPIDs   = "pids"
)

var panels = []struct {
	name  string
	share float64
}{{PanelEvents, 0.21}, {PanelRTT, 0.32}, {PanelLoss, 0.17}, {PanelPIDs, 0.3}}

// Panels is where each panel lies in the image, in pixels.
func Panels() map[string]image.Rectangle {
	rects := map[string]image.Rectangle{}
	top := 0.0
	for _, p := range panels {
		bottom := top + p.share
		rects[p.name] = image.Rect(0, int(top*Height), Width, int(bottom*Height))
		top = bottom
	}
	return rects
}

// WritePNG draws d and writes it to path.
func WritePNG(path string, d Data) error {
	img, err := Draw(d)
	if err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return bosherr.WrapErrorf(err, "Creating the timeline image '%s'", path)
	}
	if err := png.Encode(f, img); err != nil {
		_ = f.Close()
		return bosherr.WrapErrorf(err, "Writing the timeline image '%s'", path)
	}
	if err := f.Close(); err != nil {
		return bosherr.WrapErrorf(err, "Closing the timeline image '%s'", path)
	}
	return nil
}

// Draw renders d.
func Draw(d Data) (image.Image, error) {
	if !d.End.After(d.Start) {
		return nil, bosherr.Errorf("Timeline ends (%s) before it starts (%s)", d.End.Format(time.RFC3339), d.Start.Format(time.RFC3339))
	}
	axis := timeAxis{start: d.Start, seconds: d.End.Sub(d.Start).Seconds()}
	plots := map[string]*plot.Plot{
		PanelEvents: eventsPlot(d, axis),
		PanelRTT:    rttPlot(d.Probe, axis),
		PanelLoss:   lossPlot(d.Probe, axis),
		PanelPIDs:   pidsPlot(d.Workers, axis),
	}
	for name, p := range plots {
		p.X.Min, p.X.Max = 0, axis.seconds
		if name != PanelEvents {
			p.X.Tick.Marker = secondTicks{}
			p.Add(eventLines{events: d.Events, axis: axis})
		}
	}
	img := vgimg.NewWith(vgimg.UseWH(pixels(Width), pixels(Height)), vgimg.UseDPI(dpi))
	c := draw.New(img)
	c.Canvas.SetColor(white)
	c.Canvas.Fill(c.Rectangle.Path())
	canvases := panelCanvases(c)
	var ordered []*plot.Plot
	var areas []draw.Canvas
	for _, p := range panels {
		ordered = append(ordered, plots[p.name])
		areas = append(areas, canvases[p.name])
	}
	for i, area := range alignX(ordered, areas) {
		ordered[i].Draw(area)
	}
	return img.Image(), nil
}

// pixels is the length that spans n pixels at the image's resolution.
func pixels(n int) vg.Length { return vg.Length(n) * vg.Inch / dpi }

// panelCanvases cuts c into the panels' rectangles (the canvas' y grows upwards, the image's downwards).
func panelCanvases(c draw.Canvas) map[string]draw.Canvas {
	out := map[string]draw.Canvas{}
	for name, r := range Panels() {
		out[name] = draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: pixels(r.Min.X), Y: pixels(Height - r.Max.Y)},
			Max: vg.Point{X: pixels(r.Max.X), Y: pixels(Height - r.Min.Y)},
		}}
	}
	return out
}

// alignX narrows each area so that every plot's data area spans the same x range, whatever the width of
// its y axis labels: the time axis is then shared.
func alignX(plots []*plot.Plot, areas []draw.Canvas) []draw.Canvas {
	var left, right vg.Length
	for i, p := range plots {
		data := p.DataCanvas(areas[i])
		left = max(left, data.Min.X-areas[i].Min.X)
		right = max(right, areas[i].Max.X-data.Max.X)
	}
	out := make([]draw.Canvas, len(areas))
	for i, p := range plots {
		data := p.DataCanvas(areas[i])
		out[i] = draw.Crop(areas[i], left-(data.Min.X-areas[i].Min.X), -(right - (areas[i].Max.X - data.Max.X)), 0, 0)
	}
	return out
}

// timeAxis maps times to seconds since the start.
type timeAxis struct {
	start   time.Time
	seconds float64
}

func (a timeAxis) x(t time.Time) float64 { return t.Sub(a.start).Seconds() }

// secondTicks labels the time axis about every tenth of its length, at a round number of seconds.
type secondTicks struct{}

func (secondTicks) Ticks(lo, hi float64) []plot.Tick {
	step := 1.0
	for _, s := range []float64{1, 2, 5, 10, 15, 20, 30, 60, 120, 300, 600, 1200, 1800, 3600} {
		step = s
		if (hi-lo)/s <= 12 {
			break
		}
	}
	var ticks []plot.Tick
	for t := math.Ceil(lo/step) * step; t <= hi; t += step {
		ticks = append(ticks, plot.Tick{Value: t, Label: strconv.FormatFloat(t, 'f', -1, 64)})
	}
	return ticks
}
