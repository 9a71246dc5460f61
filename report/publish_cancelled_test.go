package report

import (
	"strings"
	"testing"

	"github.com/relaybench/relaybench/results"
)

// TestPublishCancelledInFlight: a publish stopped by Ctrl-C says that the
// events sent without an OK were cancelled in flight (the user's doing),
// not leave "28,881 accepted of 28,891 sent" to read as 10 the relay lost;
// the events never sent are not among them, and a publish not stopped says
// nothing more.
func TestPublishCancelledInFlight(t *testing.T) {
	ph := results.NewPhase("publish", "publish")
	ph.Duration = 3e9
	ph.Counts = map[string]int64{"sent": 28891, "accepted": 28881, "refused": 0, "timed_out": 0, "failed": 0, "cancelled": 71119}
	s := summaryText(t, oneRun("run", nil, ph), SummaryOptions{})
	if !strings.Contains(s, "Events Published: 28,881 accepted of 28,891 sent (99.96%; 10 cancelled in flight, before their OK)\n") {
		t.Errorf("the events cancelled in flight are not said:\n%s", s)
	}
	ph.Counts = map[string]int64{"sent": 100, "accepted": 97, "refused": 2, "timed_out": 1, "failed": 0, "cancelled": 0}
	s = summaryText(t, oneRun("run", nil, ph), SummaryOptions{})
	if !strings.Contains(s, "Events Published: 97 accepted of 100 sent (97.00%)\n") {
		t.Errorf("a publish not stopped:\n%s", s)
	}
}
