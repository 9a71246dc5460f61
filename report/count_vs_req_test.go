package report

import (
	"strings"
	"testing"

	"github.com/relaybench/relaybench/results"
)

// TestCountVsReqShowsBothP50s: count's "COUNT p50 vs REQ p50" gives the
// two p50s it compares, not the ratio alone (walk 11: the brief summary
// read "0.62×" and the REQ p50 was only in -v); a file without the
// latencies keeps the ratio.
func TestCountVsReqShowsBothP50s(t *testing.T) {
	ph := results.Phase{Name: "count", Workload: "count", Duration: 1e9,
		Counts:  map[string]int64{"counts": 10, "count_exact": 10},
		Rates:   map[string]float64{"count_vs_req_p50": 0.62},
		Latency: map[string]*results.Histogram{"count": hist(700, 10, 612e3, 0), "req_eose": hist(701, 10, 987e3, 0)}}
	for _, brief := range []bool{true, false} {
		s := summaryText(t, oneRun("count", nil, ph), SummaryOptions{Brief: brief})
		if want := "COUNT p50 vs REQ p50: 612µs vs 987µs (0.62×)"; !strings.Contains(s, want) {
			t.Errorf("brief %v lacks %q:\n%s", brief, want, s)
		}
	}
	ph.Latency = nil
	if s := summaryText(t, oneRun("count", nil, ph), SummaryOptions{Brief: true}); !strings.Contains(s, "COUNT p50 vs REQ p50: 0.62×\n") {
		t.Errorf("without latencies:\n%s", s)
	}
}
