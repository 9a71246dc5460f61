package judge

import (
	"strings"
	"testing"

	"github.com/relaybench/relaybench/results"
)

// findMaxPhase is a search's phase as workload.FindMax writes it: one group
// per step (pass, client_limited, machine_busy, relay_or_machine counts),
// the highest passing rate, client_limited when the search ended as a
// lower bound, and the machine's load in a note when it decided the stop.
func findMaxPhase(max float64, clientLimited bool, notes []string, steps ...results.Group) results.Phase {
	return results.Phase{Name: "find-max", Workload: "find-max", Rates: map[string]float64{results.RateMaxRate: max},
		ClientLimited: clientLimited, Groups: steps, Notes: notes,
		Accounts: []results.Account{events(900, 0, 40, 0, 0, 0, nil)}}
}

func findMaxStep(rate float64, counts ...string) results.Group {
	g := results.Group{Counts: map[string]int64{"pass": 0}, Rates: map[string]float64{"offered_per_sec": rate}}
	for _, c := range counts {
		g.Counts[c] = 1
	}
	return g
}

// TestFindMaxStoppedShortIsNotPassed: a search that stopped at a step the
// relay is not shown to have failed did not find the relay's figure, so
// it did not do its requested work. The step's verdict, as load books the
// same step, decides whose doing that was: the client (its own limit, or
// late from outside its work on a busy machine: error, exit 1, as load's
// client-limited drops), or the relay or the machine (its replies slow
// while other processes competed for the cores: incomplete, exit 4, as
// load's relay- or machine-limited drops), the reason naming the step, the
// lower bound and the machine's load. A search that ended at a step the
// relay failed on a quiet machine, or where the user bounded it
// (--max-steps, --load-max-events: no such step), passes: its failure is
// its measurement.
func TestFindMaxStoppedShortIsNotPassed(t *testing.T) {
	busy := []string{"machine busy: the answer is a lower bound on the relay's capacity, not a relay figure; at 1,250/s the client used 0.01 cores and the relay 0.20, while the machine's 1-minute load average was 22.9 on 2 cores: other processes competed for its cores, and their waits count in these figures"}
	pass := results.Group{Counts: map[string]int64{"pass": 1}, Rates: map[string]float64{"offered_per_sec": 1000}}
	for _, c := range []struct {
		name   string
		ph     results.Phase
		status int
		reason string
	}{
		{"the client limited the step", findMaxPhase(1125, true, nil, pass, findMaxStep(1250, "client_limited")), Error,
			"relaybench could not run the requested work: find-max: the search stopped at 1,250/s, a step the client limited: the answer ≥ 1,125 events/s is a lower bound"},
		{"the client limited the first step", findMaxPhase(0, true, nil, findMaxStep(1000, "client_limited")), Error,
			"find-max: the search stopped at 1,000/s, a step the client limited: no rate passed (capacity unknown)"},
		{"late from outside on a busy machine", findMaxPhase(1125, true, busy, pass, findMaxStep(1250, "client_limited", "machine_busy")), Error,
			"relaybench could not run the requested work: find-max: the search stopped at 1,250/s, a step the busy machine limited (load average 22.9 on 2 cores): the answer ≥ 1,125 events/s is a lower bound"},
		{"late from outside at the first step", findMaxPhase(0, true, busy, findMaxStep(1000, "client_limited", "machine_busy")), Error,
			"relaybench could not run the requested work: find-max: the search stopped at 1,000/s, a step the busy machine limited (load average 22.9 on 2 cores): no rate passed (capacity unknown)"},
		{"the relay or the machine", findMaxPhase(1125, true, busy, pass, findMaxStep(1250, "client_limited", "machine_busy", "relay_or_machine")), Incomplete,
			"find-max: the search stopped at 1,250/s, a step the relay or the busy machine limited (load average 22.9 on 2 cores): the answer ≥ 1,125 events/s is a lower bound"},
		{"the relay failed the step on a quiet machine", findMaxPhase(1125, false, nil, pass, findMaxStep(1250)), Passed, ""},
		{"stopped by --load-max-events", findMaxPhase(1000, true, nil, pass), Passed, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := Judge(file(c.ph), false)
			if v.Status != c.status {
				t.Fatalf("status %d (%s), want %d: %q", v.Status, v.Outcome, c.status, v.Reasons)
			}
			if c.reason != "" && !slicesHas(v.Reasons, c.reason) {
				t.Fatalf("reasons %q\nlack %q", v.Reasons, c.reason)
			}
			if c.status == Error && len(v.Reasons) != 1 {
				t.Errorf("the client's limit held against the relay too: %q", v.Reasons)
			}
			if s := Summary(v); c.status != Passed && strings.Contains(s, "…") {
				t.Errorf("the one-line verdict cut the reason: %s", s)
			}
		})
	}
}

func slicesHas(rs []string, want string) bool {
	for _, r := range rs {
		if strings.HasSuffix(r, want) {
			return true
		}
	}
	return false
}
