package verify

import (
	"strings"
	"testing"

	"github.com/relaybench/relaybench/results"
)

// overLimitNotes are v's notes on events beyond their filter's limit.
func overLimitNotes(v *results.Verification) []string {
	var out []string
	for _, n := range v.Notes {
		if strings.Contains(n, "beyond their filter's limit") {
			out = append(out, n)
		}
	}
	return out
}

// TestFinishOneOverLimitNote: a Finish after an earlier one names the
// events beyond the limit once, for the total, with thousands grouped.
// Answers judged without an expected set keep that note's kind when a
// read-back makes the whole verification full; answers judged against
// one keep theirs.
func TestFinishOneOverLimitNote(t *testing.T) {
	v := &results.Verification{OverLimit: 1500, Checked: 10}
	Finish(v)
	if len(v.Notes) != 1 || v.Notes[0] != OverLimitCheckedNote(1500) || !strings.HasPrefix(v.Notes[0], "1,500 events") {
		t.Fatalf("first Finish: notes %q", v.Notes)
	}
	v.Notes = append(v.Notes, "other")
	v.OverLimit, v.Verified = 2101, true
	Finish(v)
	if over := overLimitNotes(v); len(over) != 1 || over[0] != OverLimitCheckedNote(2101) || !strings.Contains(strings.Join(v.Notes, "\n"), "other") {
		t.Errorf("second Finish, unjudged answers: notes %q", v.Notes)
	}

	j := &results.Verification{OverLimit: 5, Checked: 10, Verified: true}
	Finish(j)
	j.OverLimit = 7
	Finish(j)
	if over := overLimitNotes(j); len(over) != 1 || over[0] != OverLimitNote(7) {
		t.Errorf("second Finish, judged answers: notes %q", j.Notes)
	}
}
