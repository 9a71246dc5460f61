package report

import (
	"strings"
	"testing"

	"github.com/relaybench/relaybench/results"
)

// The hint and the verdict each follow one blank line, never none nor
// two: a compare (several runs) had no blank line before "(-v shows …)",
// and a conformance summary two before the verdict and no hint; a
// compare two before its second run and its comparison.
func TestSummaryOneBlankLineBeforeHintAndVerdict(t *testing.T) {
	passed := &results.Verdict{Outcome: "passed"}
	phase := results.Phase{Name: "publish", Duration: 1e9, Counts: map[string]int64{"sent": 5, "accepted": 5}}
	cmp := baseFile("compare")
	cmp.Runs = []results.Run{{Relay: results.Relay{Name: "a", URL: "ws://127.0.0.1:1"}, Phases: []results.Phase{phase}},
		{Relay: results.Relay{Name: "b", URL: "ws://127.0.0.1:2"}, Phases: []results.Phase{phase}}}
	cmp.Verdict = passed
	conf := baseFile("conformance")
	conf.Runs = []results.Run{{Relay: results.Relay{URL: "ws://127.0.0.1:1"}, Conformance: []results.Check{{ID: "nip01.x", NIP: 1, Level: "MUST", Status: results.CheckPass}}}}
	conf.Verdict = passed
	for name, c := range map[string]struct {
		f    *results.File
		hint string
	}{
		"compare":     {cmp, "(-v shows every counter"},
		"conformance": {conf, "(-v shows the tool, machine, times and parameters"},
	} {
		s := summaryText(t, c.f, SummaryOptions{Brief: true})
		i := strings.Index(s, c.hint)
		if i < 2 || s[i-2:i] != "\n\n" || (i >= 3 && s[i-3] == '\n') {
			t.Errorf("%s: want one blank line before the hint:\n%s", name, s)
		}
		if !strings.Contains(s, "results file)\n\nVerdict: PASSED") {
			t.Errorf("%s: want one blank line between the hint and the verdict:\n%s", name, s)
		}
		if full := summaryText(t, c.f, SummaryOptions{}); strings.Contains(full, "\n\n\nVerdict") || !strings.Contains(full, "\n\nVerdict") {
			t.Errorf("%s -v: want one blank line before the verdict:\n%s", name, full)
		}
	}
	// A compare's runs and its comparison each follow one blank line: two
	// came before "--- Run 2 of 2" and "=== Comparison ===".
	for _, brief := range []bool{true, false} {
		s := summaryText(t, cmp, SummaryOptions{Brief: brief})
		if strings.Contains(s, "\n\n\n") || !strings.Contains(s, "\n\n--- Run 2 of 2: b ---") || !strings.Contains(s, "\n\n=== Comparison ===") {
			t.Errorf("brief %v: want one blank line before each run and the comparison:\n%s", brief, s)
		}
	}
}
