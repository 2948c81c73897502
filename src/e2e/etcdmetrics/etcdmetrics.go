// Package etcdmetrics reads what etcd's /metrics endpoint says (Prometheus text format) and compares two
// readings: request counts by gRPC method, gauges, and latency histograms.
//
//	before, err := etcdmetrics.Parse(body)
//	...
//	after.Started().Minus(before.Started())                              // requests started, by "service/method"
//	after.Histogram("grpc_server_handling_seconds", etcdmetrics.Unary).Minus(before.Histogram(...)).Quantile(0.99)
package etcdmetrics

import (
	"io"
	"maps"
	"math"
	"slices"
	"sort"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// Snapshot is one reading of one member's metrics.
type Snapshot map[string]*dto.MetricFamily

// Parse reads the text format.
func Parse(r io.Reader) (Snapshot, error) {
	var parser expfmt.TextParser
	families, err := parser.TextToMetricFamilies(r)
	if err != nil {
		return nil, bosherr.WrapError(err, "Parsing etcd's metrics")
	}
	return families, nil
}

// Labels select series; nil selects all.
type Labels func(map[string]string) bool

// Unary selects the gRPC series of unary calls: a stream's handling time is its lifetime, not a latency.
func Unary(labels map[string]string) bool {
	return labels["grpc_type"] == "unary"
}

func labelsOf(m *dto.Metric) map[string]string {
	labels := map[string]string{}
	for _, pair := range m.GetLabel() {
		labels[pair.GetName()] = pair.GetValue()
	}
	return labels
}

func (s Snapshot) series(name string, match Labels) []*dto.Metric {
	var selected []*dto.Metric
	for _, m := range s[name].GetMetric() {
		if match == nil || match(labelsOf(m)) {
			selected = append(selected, m)
		}
	}
	return selected
}

// Sum adds up the selected series of a counter, gauge or untyped metric; 0 when there is none.
func (s Snapshot) Sum(name string, match Labels) float64 {
	total := 0.0
	for _, m := range s.series(name, match) {
		total += m.GetCounter().GetValue() + m.GetGauge().GetValue() + m.GetUntyped().GetValue()
	}
	return total
}

// Counts are requests by "service/method".
type Counts map[string]float64

// Started is grpc_server_started_total by "service/method": a stream counts once, when it starts.
func (s Snapshot) Started() Counts {
	counts := Counts{}
	for _, m := range s.series("grpc_server_started_total", nil) {
		labels := labelsOf(m)
		counts[labels["grpc_service"]+"/"+labels["grpc_method"]] += m.GetCounter().GetValue()
	}
	return counts
}

// Plus adds other's counts to a copy of c.
func (c Counts) Plus(other Counts) Counts {
	sum := maps.Clone(c)
	if sum == nil {
		sum = Counts{}
	}
	for k, v := range other {
		sum[k] += v
	}
	return sum
}

// Minus is c less an earlier reading; methods with no change are left out.
func (c Counts) Minus(earlier Counts) Counts {
	delta := Counts{}
	for k, v := range c {
		if d := v - earlier[k]; d != 0 {
			delta[k] = d
		}
	}
	return delta
}

// Total is the sum over every method.
func (c Counts) Total() float64 {
	total := 0.0
	for _, v := range c {
		total += v
	}
	return total
}

// Methods are the keys, sorted.
func (c Counts) Methods() []string {
	return slices.Sorted(maps.Keys(c))
}

// Histogram is a cumulative histogram: Counts[i] observations were at most Bounds[i].
type Histogram struct {
	Bounds []float64
	Counts []float64
	Count  float64
}

// Histogram adds up the selected series of a histogram; they share their buckets in etcd.
func (s Snapshot) Histogram(name string, match Labels) Histogram {
	var h Histogram
	for _, m := range s.series(name, match) {
		h = h.Plus(fromDTO(m.GetHistogram()))
	}
	return h
}

func fromDTO(d *dto.Histogram) Histogram {
	h := Histogram{Count: float64(d.GetSampleCount())}
	for _, b := range d.GetBucket() {
		h.Bounds = append(h.Bounds, b.GetUpperBound())
		h.Counts = append(h.Counts, float64(b.GetCumulativeCount()))
	}
	return h
}

// Plus adds two histograms with the same buckets (either may be empty).
func (h Histogram) Plus(other Histogram) Histogram {
	if len(h.Bounds) == 0 {
		return other
	}
	if len(other.Bounds) == 0 {
		return h
	}
	sum := Histogram{Bounds: h.Bounds, Counts: slices.Clone(h.Counts), Count: h.Count + other.Count}
	for i := range sum.Counts {
		sum.Counts[i] += other.Counts[i]
	}
	return sum
}

// Minus is h less an earlier reading of the same histogram.
func (h Histogram) Minus(earlier Histogram) Histogram {
	if len(earlier.Bounds) == 0 {
		return h
	}
	delta := Histogram{Bounds: h.Bounds, Counts: slices.Clone(h.Counts), Count: h.Count - earlier.Count}
	for i := range delta.Counts {
		delta.Counts[i] -= earlier.Counts[i]
	}
	return delta
}

// Quantile estimates the q-quantile as Prometheus's histogram_quantile does: linearly within the bucket that
// holds it. NaN when there are no observations; the last finite bound when it lies beyond it.
func (h Histogram) Quantile(q float64) float64 {
	if h.Count == 0 {
		return math.NaN()
	}
	rank := q * h.Count
	i := sort.Search(len(h.Counts), func(i int) bool { return h.Counts[i] >= rank })
	if i == len(h.Counts) || math.IsInf(h.Bounds[i], 1) {
		return lastFinite(h.Bounds)
	}
	lower, below := 0.0, 0.0
	if i > 0 {
		lower, below = h.Bounds[i-1], h.Counts[i-1]
	}
	inBucket := h.Counts[i] - below
	if inBucket == 0 {
		return h.Bounds[i]
	}
	return lower + (h.Bounds[i]-lower)*(rank-below)/inBucket
}

func lastFinite(bounds []float64) float64 {
	for i := len(bounds) - 1; i >= 0; i-- {
		if !math.IsInf(bounds[i], 1) {
			return bounds[i]
		}
	}
	return math.NaN()
}
