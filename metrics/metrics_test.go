package metrics

import (
	"encoding/json"
	"testing"

	"github.com/relaybench/relaybench/results"
)

func TestHistogramPercentilesAndRoundTrip(t *testing.T) {
	h := NewHistogram()
	for i := int64(1); i <= 10000; i++ {
		h.Record(i * 1000) // 1 µs … 10 ms, uniform
	}
	r := h.Result()
	if r.Count != 10000 {
		t.Fatalf("count %d", r.Count)
	}
	within := func(got, want int64) bool { return got >= want*999/1000 && got <= want*1001/1000 }
	if p := r.Percentiles["50"]; !within(p, 5_000_000) {
		t.Fatalf("p50 %d, want ~5ms", p)
	}
	if p := r.Percentiles["99"]; !within(p, 9_900_000) {
		t.Fatalf("p99 %d, want ~9.9ms", p)
	}
	if _, ok := r.Percentiles["99.9"]; !ok {
		t.Fatalf("no p99.9 key: %v", r.Percentiles)
	}
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var back results.Histogram
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	d, err := FromResult(&back)
	if err != nil {
		t.Fatal(err)
	}
	if d.Count() != 10000 || d.Quantile(99) != h.Quantile(99) || d.Max() != h.Max() {
		t.Fatalf("decoded histogram differs: count %d p99 %d max %d", d.Count(), d.Quantile(99), d.Max())
	}
}

func TestHistogramMergeAndClamp(t *testing.T) {
	a, b := NewHistogram(), NewHistogram()
	a.Record(1000)
	b.Record(3000)
	b.Record(20 * 60 * 1e9) // beyond the ceiling
	b.Record(-5)            // below the floor
	a.Merge(b)
	if a.Count() != 4 || a.Clamped() != 1 {
		t.Fatalf("count %d clamped %d", a.Count(), a.Clamped())
	}
	if a.Min() != 1 {
		t.Fatalf("min %d", a.Min())
	}
}

func TestCorrectedBackfills(t *testing.T) {
	h := NewHistogram()
	h.RecordCorrected(100_000_000, 10_000_000) // a 100 ms stall with 10 ms intended interval
	if h.Count() != 10 {
		t.Fatalf("corrected count %d, want 10", h.Count())
	}
}

func TestFromResultErrors(t *testing.T) {
	if _, err := FromResult(&results.Histogram{Count: 3}); err == nil {
		t.Fatal("want error for a count without encoding")
	}
	if _, err := FromResult(&results.Histogram{Count: 3, HDR: "!!!"}); err == nil {
		t.Fatal("want error for a bad encoding")
	}
}

func TestSeries(t *testing.T) {
	s := NewSeries(1e9)
	s.Add(1e9+1, "sent", 2)
	s.Add(3e9+5, "sent", 1)
	s.Latency(1e9+2, 5000)
	s.Gauge(1e9+3, "in_flight", 4)
	s.Gauge(1e9+4, "in_flight", 2)
	o := NewSeries(1e9)
	o.Add(1e9+7, "sent", 3)
	s.Merge(o)
	pts := s.Result(4e9)
	if len(pts) != 3 {
		t.Fatalf("points %d, want 3", len(pts))
	}
	if pts[0].Counts["sent"] != 5 || pts[1].Counts != nil || pts[2].Counts["sent"] != 1 {
		t.Fatalf("counts %+v", pts)
	}
	if pts[0].Gauges["in_flight"] != 4 || pts[0].LatP50Ns == 0 {
		t.Fatalf("gauge/latency %+v", pts[0])
	}
	// A run that ended with idle seconds still has points up to its end.
	if n := len(s.Result(7e9)); n != 6 {
		t.Fatalf("points to end %d, want 6", n)
	}
}
