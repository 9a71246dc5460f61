package report

import (
	"strings"
	"testing"

	"github.com/relaybench/relaybench/results"
)

// A lifecycle phase of 50 events checks 50 read-back answers and its one
// live subscription: the brief summary says so, not "51 answers checked"
// for 50 events.
func TestLifecycleSaysWhatItChecked(t *testing.T) {
	ver := func(n int64) *results.Verification {
		return &results.Verification{Verified: true, Passed: true, Checked: n, Expected: 50, Returned: 50}
	}
	life := results.Phase{Name: "lifecycle", Workload: "lifecycle", Duration: 1e9,
		Counts: map[string]int64{"accepted": 50, "sampled": 50}, Verification: ver(51),
		Groups: []results.Group{{Name: "ok"}, {Name: "deliver", Verification: ver(1)}, {Name: "read_your_write", Verification: ver(50)}}}
	s := summaryText(t, oneRun("lifecycle", nil, life), SummaryOptions{Brief: true})
	if !strings.Contains(s, "(50 read-back answers and 1 live subscription checked)") || strings.Contains(s, "51 answers") {
		t.Errorf("lifecycle's verification line:\n%s", s)
	}
}
