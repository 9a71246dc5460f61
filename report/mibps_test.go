package report

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/relaybench/relaybench/results"
)

// Data rates have three significant digits in every table and summary, as
// byte counts do: a sweep's small payloads read "0.1 MiB/s" where 0.123
// was measured, and its large ones "217.7".
func TestDataRatesThreeSignificantDigits(t *testing.T) {
	for v, want := range map[float64]string{0: "0", 0.1234: "0.123", 0.00512: "0.00512", 0.9996: "1.00", 7.994: "7.99", 9.996: "10.0",
		12.34: "12.3", 217.7: "218", 999.4: "999", 999.6: "1,000", 12345.6: "12,346", -0.1234: "-0.123", math.NaN(): dash} {
		if got := fmtMiBps(v); got != want {
			t.Errorf("fmtMiBps(%v) = %q, want %q", v, got, want)
		}
	}
	f := oneRun("sweep", nil, results.Phase{Name: "sweep/256", Workload: "publish", Size: 256, Duration: 5e9,
		Counts: map[string]int64{"sent": 500, "accepted": 500},
		Rates:  map[string]float64{"events_per_sec": 100, "mb_per_sec": 0.1294}}) // 0.1234 MiB/s
	s := summaryText(t, f, SummaryOptions{})
	if !strings.Contains(s, "0.123 MiB/s") {
		t.Errorf("the sweep table lacks 0.123 MiB/s:\n%s", s)
	}
	tb := sweepTable(groupRuns([]*results.File{f}))
	if tb == nil || !slices.ContainsFunc(tb.rows, func(r []string) bool { return slices.Contains(r, "0.123 MiB/s") }) {
		t.Errorf("sweep table rows: %v", tb)
	}
}
