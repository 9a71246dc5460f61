package report

import (
	"strings"
	"testing"

	"github.com/relaybench/relaybench/results"
)

// A live run that ended before signing (an unreachable relay) has no
// corpus line, no nested brackets around an unknown software, and no "-v
// shows every counter" hint: it has no phase to show more of.
func TestSummaryBriefUnreachable(t *testing.T) {
	f := baseFile("mixed")
	f.Runs = []results.Run{{Relay: results.Relay{URL: "ws://127.0.0.1:1"}, Errors: []string{"dial ws://127.0.0.1:1: unreachable"}}}
	f.Verdict = &results.Verdict{Status: 1, Outcome: "error", Reasons: []string{"dial ws://127.0.0.1:1: unreachable"}}
	s := summaryText(t, f, SummaryOptions{Brief: true})
	for _, not := range []string{"Corpus:", "0 events", "(no NIP-11))", "-v shows"} {
		if strings.Contains(s, not) {
			t.Errorf("brief shows %q:\n%s", not, s)
		}
	}
	if !strings.Contains(s, "  Relay:    ws://127.0.0.1:1 (software unknown: no NIP-11 document)\n") {
		t.Errorf("relay line:\n%s", s)
	}
}
