package report

import (
	"strings"
	"testing"
)

// A find-max search that other processes competing for the machine's cores
// stopped (a lower bound, ClientLimited) warns that the figures are the
// machine's, with its "machine busy: …" note as the reason, once, and never
// says the client limited them.
func TestMachineBusyWarnsOnce(t *testing.T) {
	p := loadPhase()
	p.ClientLimited = true
	p.Notes = []string{"stopped at 1,000/s", "machine busy: the answer is a lower bound on the relay's capacity, not a relay figure; at 1,000/s the client used 0.01 cores"}
	for _, brief := range []bool{true, false} {
		s := summaryText(t, oneRun("find-max", nil, p), SummaryOptions{Brief: brief})
		want := "\n  WARNING: machine busy (these figures are the machine's, not the relay's): the answer is a lower bound on the relay's capacity, not a relay figure; at 1,000/s the client used 0.01 cores\n"
		if !strings.Contains(s, want) || strings.Count(s, "machine busy") != 1 || strings.Contains(s, "client-limited") {
			t.Errorf("brief %v: want the machine's warning once, no client-limited:\n%s", brief, s)
		}
	}
}
