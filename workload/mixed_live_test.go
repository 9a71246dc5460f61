package workload

import (
	"math"
	"sync"
	"testing"

	"github.com/relaybench/relaybench/internal/testrelay"
	"github.com/relaybench/relaybench/metrics"
	"github.com/relaybench/relaybench/results"
)

// TestMixedQueriesFeedTheLiveLatency: the live view (--web) plots the
// per-second latency of the series it follows; mixed's query parts kept
// their EOSE latency in histograms only, so the page's latency chart sat
// at 0 while they ran. Each query answered with EOSE now goes into a
// series labelled EOSE, the same values as the summary's eose histogram,
// and the publishes' series says it times OKs.
func TestMixedQueriesFeedTheLiveLatency(t *testing.T) {
	var mu sync.Mutex
	var seen []*metrics.Series
	stop := metrics.WatchSeries(func(s *metrics.Series) { mu.Lock(); seen = append(seen, s); mu.Unlock() })
	ph, _ := runMixed(t, testrelay.Config{Verify: true}, smallMixed)
	stop()
	byKind := map[string]*metrics.Histogram{}
	mu.Lock()
	for _, s := range seen {
		h := byKind[s.Timing()]
		if h == nil {
			h = metrics.NewCoarse()
			byKind[s.Timing()] = h
		}
		s.LatencySeconds(h, 0, math.MaxInt64)
	}
	mu.Unlock()
	var eose int64
	for _, g := range ph.Groups {
		if h := g.Latency["eose"]; h != nil {
			eose += h.Count
		}
	}
	q := account(t, ph, results.OpQuery)
	if got := byKind[metrics.TimesEOSE]; got == nil || got.Count() == 0 || got.Count() != eose || eose != q.Accepted {
		t.Errorf("EOSE series hold %v values; the summary's eose histograms %d, queries accepted %d", got, eose, q.Accepted)
	}
	if byKind[metrics.TimesOK] == nil || byKind[metrics.TimesOK].Count() == 0 {
		t.Errorf("no OK latency in a series labelled OK: %v", byKind)
	}
}
