package judge

import (
	"strings"
	"testing"

	"github.com/relaybench/relaybench/results"
)

func checks(st ...results.CheckStatus) *results.File {
	r := results.Run{Relay: results.Relay{URL: "ws://127.0.0.1:1"}}
	for i, s := range st {
		r.Conformance = append(r.Conformance, results.Check{ID: "c" + string(rune('0'+i)), NIP: 1, Level: "MUST", Status: s, Detail: "saw \x1b[2J"})
	}
	return &results.File{Runs: []results.Run{r}}
}

// TestJudgeConformance: a failed check is a wrong answer; unknown and not
// run are incomplete work, cancelled when the user stopped the run; named,
// pass and not announced pass. A run of checks alone is a run.
func TestJudgeConformance(t *testing.T) {
	cases := []struct {
		name        string
		f           *results.File
		interrupted bool
		status      int
		reason      string
	}{
		{"all pass", checks(results.CheckPass, results.CheckNamed, results.CheckNotAnnounced), false, Passed, ""},
		{"a MUST failed", checks(results.CheckPass, results.CheckFail, results.CheckUnknown), false, WrongAnswers, "conformance c1 (NIP-01 MUST): saw"},
		{"unknown is incomplete", checks(results.CheckPass, results.CheckUnknown), false, Incomplete, "unknown: conformance c1"},
		{"not run is incomplete", checks(results.CheckNotRun), false, Incomplete, "not-run: conformance c0"},
		{"interrupted", checks(results.CheckUnknown), true, Interrupted, ""},
		{"a failure before the interrupt stays wrong", checks(results.CheckFail), true, Interrupted, "conformance c0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := Judge(tc.f, tc.interrupted)
			if v.Status != tc.status {
				t.Fatalf("status %d, want %d: %v", v.Status, tc.status, v.Reasons)
			}
			all := strings.Join(v.Reasons, "; ")
			if tc.reason != "" && !strings.Contains(all, tc.reason) {
				t.Errorf("reasons %q lack %q", all, tc.reason)
			}
			if strings.Contains(all, "\x1b") || strings.Contains(all, "no phase ran") {
				t.Errorf("reasons %q", all)
			}
		})
	}
}
