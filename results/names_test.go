package results

import "testing"

// One rule names the primary figures for report and threshold alike.
func TestPrimaryFigures(t *testing.T) {
	h := func(n int64) *Histogram { return &Histogram{Count: n} }
	lat := []struct {
		lat  map[string]*Histogram
		want string
	}{
		{map[string]*Histogram{"ok": h(0), "ok_refused": h(5)}, LatencyOK}, // all refused: no OK latency, not another one
		{map[string]*Histogram{"eose": h(3), "first_event": h(3)}, LatencyEOSE},
		{map[string]*Histogram{"deliver": h(3), "ok": h(3)}, LatencyOK},
		{map[string]*Histogram{"req_eose": h(2), "count": h(2), "auth": h(1)}, LatencyCount},
		{map[string]*Histogram{"auth": h(1)}, ""},
		{nil, ""},
	}
	for _, c := range lat {
		if got := PrimaryLatency(c.lat); got != c.want {
			t.Errorf("PrimaryLatency(%v) = %q, want %q", c.lat, got, c.want)
		}
	}
	rates := []struct {
		rates map[string]float64
		want  string
	}{
		{map[string]float64{"mb_per_sec": 1, "events_per_sec": 2, "sent_per_sec": 3}, RateEvents},
		{map[string]float64{"count_vs_req_p50": 1, "counts_per_sec": 2}, RateCounts},
		{map[string]float64{"recall": 1, "searches_per_sec": 2}, RateSearches},
		{map[string]float64{"offered_per_sec": 1, "achieved_per_sec": 2}, RateAchieved},
		{map[string]float64{"fanout": 1, "recall": 1}, ""},
		{map[string]float64{"b_per_sec": 1, "a_per_sec": 1}, "a_per_sec"},
	}
	for _, c := range rates {
		if got := PrimaryRate(c.rates); got != c.want {
			t.Errorf("PrimaryRate(%v) = %q, want %q", c.rates, got, c.want)
		}
	}
	if PerSecond(10, 2e9) != 5 || PerSecond(10, 0) != 0 {
		t.Errorf("PerSecond: 10 in 2 s = %v, in 0 s = %v", PerSecond(10, 2e9), PerSecond(10, 0))
	}
}
