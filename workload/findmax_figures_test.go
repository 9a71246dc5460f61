package workload

import (
	"strings"
	"testing"
	"time"

	"github.com/relaybench/relaybench/results"
)

// A step's counts have thousands separators in its verdict and in the
// steps table ("4,016 dropped", "| 4,016 |"), as every count a reader sees.
func TestFindMaxStepCountsGrouped(t *testing.T) {
	o := findMaxP99(64)
	a := results.Account{Op: results.OpEvent, Requested: 20000, NotRun: 4016, NotRunBy: map[string]int64{WhyRelayDrop: 4016}}
	a.Accepted = a.Requested - a.Total()
	ph := results.Phase{Name: "find-max/16000", Duration: int64(time.Second), Counts: map[string]int64{"intended": 20000},
		Notes: []string{"relay-limited: ops were late or dropped"}, Accounts: []results.Account{a},
		Latency: map[string]*results.Histogram{"ok": p99Hist(int64(time.Second)), "ok_uncorrected": p99Hist(int64(900 * time.Millisecond))}}
	v := judgeSteps(ph, o)
	if v.pass || !strings.Contains(v.why, "4,016 dropped") {
		t.Errorf("step verdict %q: want 4,016 dropped", v.why)
	}
	st := Step{Rate: 16000, Phase: ph, Why: v.why}
	if row := findMaxStepRow(st, findMaxStepGroup(st), false); !strings.Contains(row, "| 4,016 |") {
		t.Errorf("steps table row %q: want | 4,016 |", row)
	}
}

// A search --max-steps ended after a failing step, before it bisected to
// --precision, answers with the bracket, not a figure: "between 8,000 and
// 16,000 events/s (--max-steps ended the search before it reached
// --precision 5%)"; within the precision, the plain figure stays.
func TestFindMaxUnbisectedAnswer(t *testing.T) {
	res := &FindMaxResult{Max: 8000, FirstFail: 16000}
	res.Unbisected = unbisected(res, 0.05)
	if got, want := findMaxAnswer(res, 0.05), "between 8,000 and 16,000 events/s (--max-steps ended the search before it reached --precision 5%)"; !res.Unbisected || got != want {
		t.Errorf("answer %q, want %q", got, want)
	}
	done := &FindMaxResult{Max: 8000, FirstFail: 8250}
	done.Unbisected = unbisected(done, 0.05)
	if got := findMaxAnswer(done, 0.05); done.Unbisected || got != "8,000 events/s (8,250/s failed)" {
		t.Errorf("a search within its precision answers %q", got)
	}
	limited := &FindMaxResult{Max: 8000, FirstFail: 16000, ClientLimited: true}
	if unbisected(limited, 0.05) {
		t.Errorf("a client-limited search is said unbisected")
	}
}

// The search's phase mirrors its account's not run (drops, mostly) as
// not_run, the outcome's own name, never "not_sent" beside it.
func TestFindMaxNotRunOneName(t *testing.T) {
	a := results.Account{Op: results.OpEvent, Requested: 20000, NotRun: 4016, NotRunBy: map[string]int64{WhyRelayDrop: 4016}}
	a.Accepted = a.Requested - a.Total()
	step := Step{Rate: 16000, Phase: results.Phase{Duration: int64(time.Second), Counts: map[string]int64{}, Accounts: []results.Account{a}}}
	ph := results.NewPhase("find-max", "find-max")
	res := &FindMaxResult{Steps: []Step{step}}
	buildFindMaxPhase(&ph, res, findMaxP99(64), "")
	if _, ok := ph.Counts["not_sent"]; ok || ph.Counts["not_run"] != 4016 {
		t.Errorf("counts %v: want not_run 4016 and no not_sent", ph.Counts)
	}
}
