package report

import (
	"strings"
	"testing"
)

// A client-limited phase says so in one line with its own reason (its
// "client-limited: …" note), not in a warning followed by the note saying
// it again; without such a note the warning gives the general reason.
func TestClientLimitedOnce(t *testing.T) {
	p := loadPhase()
	p.ClientLimited = true
	p.Notes = []string{"lateness p99 1.3ms", "client-limited: the dispatcher handed ops out late (dispatch lateness p99 1.3ms > 1ms)"}
	for _, brief := range []bool{true, false} {
		s := summaryText(t, oneRun("load", nil, p), SummaryOptions{Brief: brief})
		want := "\n  WARNING: client-limited (these figures are the client's, not the relay's): the dispatcher handed ops out late (dispatch lateness p99 1.3ms > 1ms)\n"
		if !strings.Contains(s, want) || strings.Count(s, "client-limited") != 1 || !strings.Contains(s, "\n  Note: lateness p99 1.3ms\n") {
			t.Errorf("brief %v: want the warning once with the note's reason, the other note kept:\n%s", brief, s)
		}
	}
	p.Notes = p.Notes[:1]
	s := summaryText(t, oneRun("load", nil, p), SummaryOptions{Brief: true})
	if !strings.Contains(s, "\n  WARNING: client-limited: the client, not the relay, limited these figures\n") {
		t.Errorf("no note: want the general warning:\n%s", s)
	}
}
