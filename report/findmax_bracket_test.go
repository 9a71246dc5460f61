package report

import (
	"strings"
	"testing"

	"github.com/relaybench/relaybench/results"
)

// A find-max search --max-steps ended before it bisected to --precision
// has only a bracket for an answer: the headline says "between 8,000 and
// 16,000 events/second (--max-steps ended the search before it reached
// --precision 5%)" in both summaries, the tables mark the figure a lower
// bound, and max_rate stays the last passing rate; a search bisected to
// its precision keeps its plain figure.
func TestFindMaxBracketHeadline(t *testing.T) {
	ph := results.Phase{Name: "find-max", Workload: "find-max", Duration: 2e9,
		Counts: map[string]int64{"steps": 3}, Params: map[string]any{"precision": 0.05},
		Rates: map[string]float64{"max_rate": 8000, "first_failing_rate": 16000},
		Groups: []results.Group{
			{Name: "8,000/s", Counts: map[string]int64{"pass": 1}, Rates: map[string]float64{"offered_per_sec": 8000}},
			{Name: "16,000/s", Counts: map[string]int64{"pass": 0}, Rates: map[string]float64{"offered_per_sec": 16000}}}}
	const want = "Max rate: between 8,000 and 16,000 events/second (--max-steps ended the search before it reached --precision 5%)\n"
	for _, o := range []SummaryOptions{{}, {Brief: true}} {
		if s := summaryText(t, oneRun("find-max", nil, ph), o); !strings.Contains(s, want) {
			t.Errorf("brief %v: the headline is no bracket:\n%s", o.Brief, s)
		}
	}
	page, md := render(t, oneRun("find-max", nil, ph))
	for name, s := range map[string]string{"HTML": page, "Markdown": md} {
		if !strings.Contains(s, "≥ 8,000") {
			t.Errorf("%s: the max rate is not marked a lower bound", name)
		}
	}
	if MaxRateBound(&ph) == "" || ph.Rates["max_rate"] != 8000 {
		t.Errorf("the JSON report's max_rate_bound is empty")
	}
	done := ph
	done.Rates = map[string]float64{"max_rate": 8000, "first_failing_rate": 8300}
	if s := summaryText(t, oneRun("find-max", nil, done), SummaryOptions{Brief: true}); !strings.Contains(s, "Max rate: 8,000 events/second\n") {
		t.Errorf("a search within its precision reads:\n%s", s)
	}
}
