package timeline

import (
	"fmt"
	"image/color"
	"math"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

var (
	white     = color.RGBA{R: 255, G: 255, B: 255, A: 255}
	eventGrey = color.RGBA{R: 150, G: 150, B: 150, A: 255}
	rttBlue   = color.RGBA{R: 31, G: 119, B: 180, A: 255}
	rangeBlue = color.RGBA{R: 158, G: 202, B: 225, A: 255}
	lossRed   = color.RGBA{R: 214, G: 39, B: 40, A: 255}
	// spanColours alternate along a lane each time its PID changes; a lane with no flanneld is lossRed.
	spanColours = []color.Color{
		color.RGBA{R: 44, G: 160, B: 44, A: 255},
		color.RGBA{R: 255, G: 127, B: 14, A: 255},
		color.RGBA{R: 148, G: 103, B: 189, A: 255},
	}
)

func textStyle(size vg.Length, rotation float64) draw.TextStyle {
	return draw.TextStyle{Color: color.Black, Font: font.From(plot.DefaultFont, size), Handler: plot.DefaultTextHandler,
		Rotation: rotation, XAlign: draw.XLeft, YAlign: draw.YCenter}
}

func eventsPlot(d Data, axis timeAxis) *plot.Plot {
	p := plot.New()
	p.Title.Text = d.Title
	p.HideAxes()
	p.Add(eventLines{events: d.Events, axis: axis, labelled: true})
	return p
}

func rttPlot(buckets []Bucket, axis timeAxis) *plot.Plot {
	p := plot.New()
	p.Y.Label.Text = "probe RTT (ms)"
	p.Y.Min = 0
	var lo, mid, hi plotter.XYs
	for _, b := range buckets {
		if b.RTTMax == 0 {
			continue
		}
		x := axis.x(b.Start.Add(b.Width / 2))
		lo = append(lo, plotter.XY{X: x, Y: ms(b.RTTMin)})
		mid = append(mid, plotter.XY{X: x, Y: ms(b.RTTMedian)})
		hi = append(hi, plotter.XY{X: x, Y: ms(b.RTTMax)})
		p.Y.Max = max(p.Y.Max, ms(b.RTTMax))
	}
	p.Y.Max = max(p.Y.Max, 1)
	addLine(p, hi, rangeBlue, 1, "max")
	addLine(p, lo, rangeBlue, 1, "min")
	addLine(p, mid, rttBlue, 1.5, "median")
	p.Legend.Top = true
	return p
}

func lossPlot(buckets []Bucket, axis timeAxis) *plot.Plot {
	p := plot.New()
	p.Y.Label.Text = "probe loss (%)"
	p.Y.Min, p.Y.Max = 0, 1
	var pts plotter.XYs
	for _, b := range buckets {
		if b.Sent == 0 {
			continue
		}
		pct := 100 * float64(b.Lost) / float64(b.Sent)
		pts = append(pts, plotter.XY{X: axis.x(b.Start), Y: pct})
		p.Y.Max = max(p.Y.Max, pct)
	}
	if l := addLine(p, pts, lossRed, 1.5, ""); l != nil {
		l.StepStyle = plotter.PostStep
	}
	return p
}

func pidsPlot(lanes []Lane, axis timeAxis) *plot.Plot {
	p := plot.New()
	p.Y.Label.Text = "flanneld PID"
	p.Y.Min, p.Y.Max = -0.5, float64(len(lanes))-0.5
	var ticks plot.ConstantTicks
	for i, l := range lanes {
		ticks = append(ticks, plot.Tick{Value: laneY(i, len(lanes)), Label: l.Name})
	}
	p.Y.Tick.Marker = ticks
	p.Add(laneSpans{lanes: lanes, axis: axis})
	p.X.Label.Text = "seconds since the start"
	return p
}

// laneY puts the first lane at the top.
func laneY(i, n int) float64 { return float64(n - 1 - i) }

func addLine(p *plot.Plot, pts plotter.XYs, c color.Color, width vg.Length, legend string) *plotter.Line {
	if len(pts) == 0 {
		return nil
	}
	l, err := plotter.NewLine(pts)
	if err != nil { // only for NaN or infinite values, which durations never give
		return nil
	}
	l.Color, l.Width = c, width
	p.Add(l)
	if legend != "" {
		p.Legend.Add(legend, l)
	}
	return l
}

func ms(d time.Duration) float64 { return d.Seconds() * 1000 }

// eventLines draws a vertical line at each event across the panel, with its label when labelled.
type eventLines struct {
	events   []Event
	axis     timeAxis
	labelled bool
}

func (e eventLines) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	line := draw.LineStyle{Color: eventGrey, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(4), vg.Points(3)}}
	label := textStyle(10, math.Pi/2)
	for _, ev := range e.events {
		x := trX(e.axis.x(ev.At))
		if !c.ContainsX(x) {
			continue
		}
		c.StrokeLine2(line, x, c.Min.Y, x, c.Max.Y)
		if e.labelled {
			c.FillText(label, vg.Point{X: x + vg.Points(6), Y: c.Min.Y + vg.Points(2)}, ev.Label)
		}
	}
}

// laneSpans draws each lane as a thick bar per span, labelled with the span's PID, and a new colour
// whenever the PID changes.
type laneSpans struct {
	lanes []Lane
	axis  timeAxis
}

func (l laneSpans) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	label := textStyle(10, 0)
	for i, lane := range l.lanes {
		y := trY(laneY(i, len(l.lanes)))
		colour, last := -1, -1
		for _, s := range lane.Spans {
			changed := s.PID != last
			if changed {
				colour, last = colour+1, s.PID
			}
			bar := draw.LineStyle{Color: spanColour(s.PID, colour), Width: vg.Points(14)}
			x0, x1 := trX(l.axis.x(s.From)), trX(l.axis.x(s.To))
			x0, x1 = max(x0, c.Min.X), min(x1, c.Max.X)
			if x1 <= x0 {
				continue
			}
			c.StrokeLine2(bar, x0, y, x1, y)
			if changed {
				c.FillText(label, vg.Point{X: x0 + vg.Points(3), Y: y + vg.Points(14)}, pidLabel(s.PID))
			}
		}
	}
}

func spanColour(pid, index int) color.Color {
	if pid == 0 {
		return lossRed
	}
	return spanColours[index%len(spanColours)]
}

func pidLabel(pid int) string {
	if pid == 0 {
		return "no flanneld"
	}
	return fmt.Sprintf("PID %d", pid)
}
