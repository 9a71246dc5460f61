package live

import (
	"strings"
	"testing"

	"github.com/relaybench/relaybench/outcome"
	"github.com/relaybench/relaybench/results"
)

// lastPoint ticks st once and returns the point it took.
func lastPoint(t *testing.T, st *State) Point {
	t.Helper()
	st.Tick()
	h := st.History()
	if len(h) == 0 {
		t.Fatal("no point taken")
	}
	return h[len(h)-1]
}

// TestRequestedCountsTheAnnouncedPlan: the page's "requested (whole run)"
// card counts the phase in flight's whole announced plan from when it is
// announced, as its progress bar does (a newcomer saw "13,000 requested"
// beside mixed's bar "2,499 / 6,360": the card counted only the parts
// already started); a progress announced before any workload (signing the
// corpus) is no plan of operations and is not counted.
func TestRequestedCountsTheAnnouncedPlan(t *testing.T) {
	st := New(Options{Run: "r", Command: "mixed"})
	defer st.Close()
	st.Progress("Signing 3,000 events", 3000)(1000)
	if p := lastPoint(t, st); p.Requested != 0 {
		t.Errorf("while signing: requested %d, want 0 (signing requests no operation)", p.Requested)
	}
	preload := latencyPhase("preload", 1e6, 2e6, 3e6) // 4 requested
	st.PhaseDone(preload)

	st.Workload("mixed")
	done := st.Progress("mixed: 6,360 operations in three parts of 10s each, then the read-back", 6360)
	if p := lastPoint(t, st); p.Requested != 4+6360 {
		t.Errorf("plan announced, no part started: requested %d, want %d (the preload's 4 and the plan's 6,360)", p.Requested, 4+6360)
	}
	l := outcome.New(results.OpEvent, 2499) // the first part's ledger books its own operations
	l.AddN(outcome.Accepted, "", 2000)
	done(2000)
	p := lastPoint(t, st)
	if p.Total != 6360 || p.Done != 2000 {
		t.Fatalf("progress %d / %d, want 2,000 / 6,360", p.Done, p.Total)
	}
	if p.Requested != 4+6360 {
		t.Errorf("first part under way: requested %d, want %d: the card counts fewer than the bar's plan", p.Requested, 4+6360)
	}
	if p.Outcomes["accepted"] != 2000+3 {
		t.Errorf("accepted %d, want 2,003 (the part's 2,000 and the preload's 3)", p.Outcomes["accepted"])
	}
}

// TestPrometheusRequestedIsThePlan: relaybench_operations_requested_total
// {phase="current"} counts the phase in flight's whole request, as the
// page's card does: mixed's announced plan (6,360) from its announcement,
// not the 2,499 its first part's ledger booked so far.
func TestPrometheusRequestedIsThePlan(t *testing.T) {
	st := New(Options{Run: "r", Command: "mixed"})
	defer st.Close()
	current := func() string {
		for _, line := range strings.Split(string(st.Exposition()), "\n") {
			if strings.HasPrefix(line, "relaybench_operations_requested_total{") && strings.Contains(line, `phase="current"`) {
				return line[strings.LastIndex(line, " ")+1:]
			}
		}
		return "none"
	}
	st.Workload("mixed")
	done := st.Progress("mixed: 6,360 operations in three parts of 10s each, then the read-back", 6360)
	if got := current(); got != "6360" {
		t.Errorf("plan announced, no part started: requested %s, want 6360", got)
	}
	l := outcome.New(results.OpEvent, 2499) // the first part's ledger books its own operations
	l.AddN(outcome.Accepted, "", 2000)
	done(2000)
	if got := current(); got != "6360" {
		t.Errorf("first part under way: requested %s, want the plan's 6360, not what was booked so far", got)
	}
}
