package schedule

import (
	"strings"
	"testing"
	"time"

	"github.com/relaybench/relaybench/metrics"
)

// A count of one operation is said in the singular in the schedule's notes
// and in its diagnosis ("1 operation dropped", never "1 operations").
func TestNotesSayOneOperation(t *testing.T) {
	r := &Result{Pool: 4, MaxInFlight: 4, Dropped: 1, Unfinished: 1, Failed: 1, Warmup: time.Second, WarmupOps: 1,
		MaxLateness: time.Second, Drain: 10 * time.Second, Lateness: metrics.NewHistogram(), DispatchLateness: metrics.NewHistogram(),
		Latency: metrics.NewHistogram(), Uncorrected: metrics.NewHistogram()}
	r.diagnose()
	all := append([]string{r.ClientLimitedWhy}, r.notes()...)
	for _, want := range []string{"1 operation dropped (not started within 1s)", "1 operation dropped (not started within 1s of its intended time)",
		"1 operation not finished when the 10s drain ended", "1 operation failed without a reply", "warm-up (1 operation)"} {
		found := false
		for _, n := range all {
			found = found || strings.Contains(n, want)
		}
		if !found {
			t.Errorf("no %q in %q", want, all)
		}
	}
	for _, n := range all {
		if strings.Contains(n, "1 operations") {
			t.Errorf("plural for one: %q", n)
		}
	}
}

// The notes agree in number with their count: one dropped operation was not
// started within the allowance of "its" intended time, several of "their";
// a run interrupted after one intended operation says whether "it" started
// ("1 operation had been intended …, 1 of them never started" read as a
// miscount).
func TestNotesAgreeInNumber(t *testing.T) {
	note := func(r *Result) string {
		r.MaxLateness, r.Pool, r.End = time.Second, 4, int64(2*time.Second)
		r.Lateness, r.Latency, r.Uncorrected = metrics.NewHistogram(), metrics.NewHistogram(), metrics.NewHistogram()
		return strings.Join(r.notes(), "\n")
	}
	for _, tc := range []struct {
		r         *Result
		want, not string
	}{
		{&Result{Dropped: 1}, "1 operation dropped (not started within 1s of its intended time)", "their"},
		{&Result{Dropped: 2}, "2 operations dropped (not started within 1s of their intended time)", " its "},
		{&Result{Interrupted: true, Intended: 1, Canceled: 1, planned: 10}, "1 operation had been intended (of 10 in the pattern), it never started", "of them"},
		{&Result{Interrupted: true, Intended: 1, planned: 10}, "1 operation had been intended (of 10 in the pattern), it started", "of them"},
		{&Result{Interrupted: true, Intended: 3, Canceled: 1, planned: 10}, "3 operations had been intended (of 10 in the pattern), 1 of them never started", "it never"},
	} {
		got := note(tc.r)
		if !strings.Contains(got, tc.want) || strings.Contains(got, tc.not) {
			t.Errorf("notes %q: want %q, without %q", got, tc.want, tc.not)
		}
	}
}

// Little's-law demand is said with three significant digits, never with
// the float's binary noise (a walk read "1.8900000000000001 ops"), and a
// pool of two is "both" slots.
func TestOpsInFlightWords(t *testing.T) {
	for need, want := range map[float64]string{1.89: "1.89 ops", 1.8900000000000001: "1.89 ops", 0.25: "0.25 ops", 1: "1 op", 15.94: "15.9 ops",
		159.4: "159 ops", 1594.2: "1,594 ops", 0.0001: "under 0.001 ops"} {
		if got := opsInFlight(need); got != want {
			t.Errorf("opsInFlight(%v) = %q, want %q", need, got, want)
		}
	}
	r := &Result{Pool: 2, Uncorrected: metrics.NewHistogram()}
	r.Uncorrected.Record(int64(3780 * time.Microsecond))
	r.Start, r.End = 0, int64(time.Second)
	if n := r.littleNote(); !strings.HasPrefix(n, "both in-flight slots (--load-pool) were busy at times") {
		t.Errorf("pool of 2: %q", n)
	}
}
