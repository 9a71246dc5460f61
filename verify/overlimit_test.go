package verify

import (
	"strings"
	"testing"

	"github.com/relaybench/relaybench/results"
)

// TestFinishOneOverLimitNote: a Finish after an earlier one (answers
// judged without an expected set, then a read-back added) names the
// events beyond the limit once, for the total, with thousands grouped.
func TestFinishOneOverLimitNote(t *testing.T) {
	v := &results.Verification{OverLimit: 1500, Checked: 10}
	Finish(v)
	if len(v.Notes) != 1 || v.Notes[0] != OverLimitCheckedNote(1500) || !strings.HasPrefix(v.Notes[0], "1,500 events") {
		t.Fatalf("first Finish: notes %q", v.Notes)
	}
	v.Notes = append(v.Notes, "other")
	v.OverLimit, v.Verified = 2101, true
	Finish(v)
	var over []string
	for _, n := range v.Notes {
		if strings.Contains(n, "beyond their filter's limit") {
			over = append(over, n)
		}
	}
	if len(over) != 1 || over[0] != OverLimitNote(2101) || !strings.HasPrefix(over[0], "2,101 events") || !strings.Contains(strings.Join(v.Notes, "\n"), "other") {
		t.Errorf("second Finish: notes %q", v.Notes)
	}
}
