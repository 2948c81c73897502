package etcdmetrics_test

import (
	"math"
	"strconv"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/flannel-dns/flannel-dns/src/e2e/etcdmetrics"
)

// reading is a member's /metrics in the text format, trimmed to what the package reads; handled counts the
// unary Range calls in the 5 ms, 10 ms and 25 ms buckets.
func reading(ranges, watches int, handled [3]int) string {
	cumulative := [3]int{handled[0], handled[0] + handled[1], handled[0] + handled[1] + handled[2]}
	return strings.NewReplacer(
		"RANGES", strconv.Itoa(ranges), "WATCHES", strconv.Itoa(watches),
		"B5", strconv.Itoa(cumulative[0]), "B10", strconv.Itoa(cumulative[1]), "B25", strconv.Itoa(cumulative[2]),
	).Replace(`# TYPE grpc_server_started_total counter
grpc_server_started_total{grpc_method="Range",grpc_service="etcdserverpb.KV",grpc_type="unary"} RANGES
grpc_server_started_total{grpc_method="Watch",grpc_service="etcdserverpb.Watch",grpc_type="bidi_stream"} WATCHES
# TYPE etcd_server_is_leader gauge
etcd_server_is_leader 1
# TYPE grpc_server_handling_seconds histogram
grpc_server_handling_seconds_bucket{grpc_method="Range",grpc_service="etcdserverpb.KV",grpc_type="unary",le="0.005"} B5
grpc_server_handling_seconds_bucket{grpc_method="Range",grpc_service="etcdserverpb.KV",grpc_type="unary",le="0.01"} B10
grpc_server_handling_seconds_bucket{grpc_method="Range",grpc_service="etcdserverpb.KV",grpc_type="unary",le="0.025"} B25
grpc_server_handling_seconds_bucket{grpc_method="Range",grpc_service="etcdserverpb.KV",grpc_type="unary",le="+Inf"} B25
grpc_server_handling_seconds_sum{grpc_method="Range",grpc_service="etcdserverpb.KV",grpc_type="unary"} 0.1
grpc_server_handling_seconds_count{grpc_method="Range",grpc_service="etcdserverpb.KV",grpc_type="unary"} B25
grpc_server_handling_seconds_bucket{grpc_method="Watch",grpc_service="etcdserverpb.Watch",grpc_type="bidi_stream",le="0.005"} 0
grpc_server_handling_seconds_bucket{grpc_method="Watch",grpc_service="etcdserverpb.Watch",grpc_type="bidi_stream",le="0.01"} 0
grpc_server_handling_seconds_bucket{grpc_method="Watch",grpc_service="etcdserverpb.Watch",grpc_type="bidi_stream",le="0.025"} 0
grpc_server_handling_seconds_bucket{grpc_method="Watch",grpc_service="etcdserverpb.Watch",grpc_type="bidi_stream",le="+Inf"} 7
grpc_server_handling_seconds_sum{grpc_method="Watch",grpc_service="etcdserverpb.Watch",grpc_type="bidi_stream"} 700
grpc_server_handling_seconds_count{grpc_method="Watch",grpc_service="etcdserverpb.Watch",grpc_type="bidi_stream"} 7
`)
}

func parse(text string) etcdmetrics.Snapshot {
	snap, err := etcdmetrics.Parse(strings.NewReader(text))
	Expect(err).NotTo(HaveOccurred())
	return snap
}

var _ = Describe("a member's metrics", func() {
	It("counts the requests started between two readings, by method", func() {
		before := parse(reading(10, 2, [3]int{0, 0, 0}))
		after := parse(reading(25, 3, [3]int{0, 0, 0}))
		delta := after.Started().Minus(before.Started())
		Expect(delta).To(Equal(etcdmetrics.Counts{"etcdserverpb.KV/Range": 15, "etcdserverpb.Watch/Watch": 1}))
		Expect(delta.Total()).To(Equal(16.0))
		Expect(after.Sum("etcd_server_is_leader", nil)).To(Equal(1.0))
	})

	It("adds up readings of several members", func() {
		one := parse(reading(10, 2, [3]int{0, 0, 0})).Started()
		two := parse(reading(5, 1, [3]int{0, 0, 0})).Started()
		Expect(one.Plus(two).Total()).To(Equal(18.0))
	})

	It("takes quantiles of the unary calls handled between two readings, leaving streams out", func() {
		before := parse(reading(0, 0, [3]int{50, 0, 0}))
		after := parse(reading(0, 0, [3]int{50, 90, 10}))
		h := after.Histogram("grpc_server_handling_seconds", etcdmetrics.Unary).
			Minus(before.Histogram("grpc_server_handling_seconds", etcdmetrics.Unary))
		Expect(h.Count).To(Equal(100.0))
		// 90 of the 100 new calls took 5 to 10 ms: the median lies halfway in that bucket, the 99th
		// percentile nine tenths into the next one.
		Expect(h.Quantile(0.5)).To(BeNumerically("~", 0.005+0.005*50/90, 1e-9))
		Expect(h.Quantile(0.99)).To(BeNumerically("~", 0.01+0.015*9/10, 1e-9))
	})

	It("says NaN for a quantile of no calls, and the last finite bound beyond it", func() {
		Expect(math.IsNaN(etcdmetrics.Histogram{}.Quantile(0.99))).To(BeTrue())
		streams := parse(reading(0, 0, [3]int{0, 0, 0})).Histogram("grpc_server_handling_seconds", nil)
		Expect(streams.Quantile(0.99)).To(Equal(0.025))
	})
})
