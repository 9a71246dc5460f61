package live

import (
	"math"
	"slices"
)

// latencyOf is the latency of each kind in secs that holds any.
func latencyOf(secs []kindSeconds) []Latency {
	var out []Latency
	for _, k := range secs {
		if h := k.h; h.Count() > 0 {
			out = append(out, Latency{Of: k.of, Count: h.Count(), P50: ms(h.Quantile(50)), P90: ms(h.Quantile(90)),
				P99: ms(h.Quantile(99)), Max: ms(h.Max())})
		}
	}
	return out
}

// mergeKinds merges b's histograms into a's of the same kind (a's own,
// changed), a's kinds first; it returns a.
func mergeKinds(a, b []kindSeconds) []kindSeconds {
	for _, k := range b {
		if j := slices.IndexFunc(a, func(x kindSeconds) bool { return x.of == k.of }); j >= 0 {
			a[j].h.Merge(k.h)
		} else {
			a = append(a, k)
		}
	}
	return a
}

// mergeLat is the latency of a point standing for the points of a and b
// (a new slice; neither changes): of each kind, the counts summed and the
// highest p50, p90, p99 and max of the two, an upper envelope (a spike in
// any of them shows), not the percentiles of their values together.
func mergeLat(a, b []Latency) []Latency {
	if len(a) == 0 {
		return b
	}
	if len(b) == 0 {
		return a
	}
	out := slices.Clone(a)
	for _, l := range b {
		j := slices.IndexFunc(out, func(x Latency) bool { return x.Of == l.Of })
		if j < 0 {
			out = append(out, l)
			continue
		}
		m := &out[j]
		m.Count += l.Count
		m.P50, m.P90, m.P99, m.Max = max(m.P50, l.P50), max(m.P90, l.P90), max(m.P99, l.P99), max(m.Max, l.Max)
	}
	return out
}

// flushSeries reads the seconds of the followed series not read yet, the
// last one still filling too (their phase ended), and keeps their latency
// for the next point (s.tickMu held, s.mu not): a phase shorter than a
// tick, or the end of one, is never lost from the chart.
func (s *State) flushSeries() {
	_, series := s.snapshotWatched()
	secs, next := newSeconds(series, math.MaxInt64)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advance(series, next)
	s.pending = mergeKinds(s.pending, secs)
}
