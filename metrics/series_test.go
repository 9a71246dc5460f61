package metrics

import "testing"

// A phase shorter than FineSpan gets FineStep points; a longer one (or one
// without an end) one point per second, as before.
func TestSeriesFineForShortPhases(t *testing.T) {
	const start = 5e9
	s := NewSeries(start)
	s.Add(start+10e6, "accepted", 1)  // 0.01 s
	s.Add(start+150e6, "accepted", 2) // 0.15 s
	s.Add(start+260e6, "accepted", 4) // 0.26 s
	s.Latency(start+150e6, 2e6)
	s.Gauge(start+150e6, "in_flight", 3)
	o := NewSeries(start)
	o.Add(start+160e6, "accepted", 8)
	s.Merge(o)

	pts := s.Result(start + 280e6)
	if len(pts) != 3 {
		t.Fatalf("%d points, want 3 of 100 ms", len(pts))
	}
	for i, p := range pts {
		if p.T != 0 || p.AtMs != int64(i)*100 || p.WidthMs != 100 {
			t.Errorf("point %d at t=%d at_ms=%d width_ms=%d", i, p.T, p.AtMs, p.WidthMs)
		}
	}
	if pts[0].Counts["accepted"] != 1 || pts[1].Counts["accepted"] != 10 || pts[2].Counts["accepted"] != 4 {
		t.Errorf("counts %v %v %v", pts[0].Counts, pts[1].Counts, pts[2].Counts)
	}
	if pts[1].LatP50Ns == 0 || pts[0].LatP50Ns != 0 || pts[1].Gauges["in_flight"] != 3 {
		t.Errorf("latency/gauge %+v", pts[1])
	}

	// The same series read as a longer phase: seconds, without width.
	long := s.Result(start + 4e9)
	if len(long) != 4 || long[0].WidthMs != 0 || long[0].Counts["accepted"] != 15 || long[3].T != 3 {
		t.Errorf("seconds %+v", long)
	}
	// Just under FineSpan is still fine; FineSpan itself is not.
	if n := len(s.Result(start + FineSpan - 1)); n != int(FineSpan/FineStep) {
		t.Errorf("%d points just under FineSpan", n)
	}
	if p := s.Result(start + FineSpan); len(p) != 3 || p[0].WidthMs != 0 {
		t.Errorf("at FineSpan: %d points, width %d", len(p), p[0].WidthMs)
	}
}

// Fine buckets stop at FineSpan: later records only go to the seconds.
func TestSeriesFineBounded(t *testing.T) {
	s := NewSeries(0)
	s.Add(10e9, "sent", 1)
	s.Latency(10e9, 5e6)
	if len(s.fine.counts) != 0 || len(s.sec.counts) != 11 {
		t.Fatalf("fine %d, seconds %d buckets", len(s.fine.counts), len(s.sec.counts))
	}
	pts := s.Result(11e9)
	if len(pts) != 11 || pts[10].Counts["sent"] != 1 || pts[10].LatP99Ns == 0 {
		t.Fatalf("points %+v", pts[10])
	}
}
