package report

import "testing"

// A ratio far below 1 keeps its figure: "0.00448×", where "%.2f×" printed
// "0.00×", which reads as zero or a division gone wrong (a walk's mixed run:
// OK 643ms → 2.88ms).
func TestFmtTimesSmallRatio(t *testing.T) {
	for r, want := range map[float64]string{2.88 / 643: "0.00448×", 0.15: "0.15×", 1: "1.00×", 7.42: "7.42×", 0: dash} {
		if got := fmtTimes(r); got != want {
			t.Errorf("fmtTimes(%v) = %q, want %q", r, got, want)
		}
	}
}
