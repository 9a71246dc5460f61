package report

import (
	"strings"
	"testing"
)

// The summary gives every duration in one format, three significant digits
// with a unit: a 60 s load's "Duration: 60.0s" beside a 5 s phase's
// "5.00s" (it printed Go's "1m0s"), and the run's length in the full
// summary's header likewise.
func TestSummaryDurationsOneFormat(t *testing.T) {
	load := loadPhase()
	load.Duration = 60e9
	pub := publishPhase(1, 100, 20, 1e6)
	pub.Duration = 5e9
	f := oneRun("load", nil, pub, load)
	f.FinishedAt = f.StartedAt.Add(74400e6)
	for _, o := range []SummaryOptions{{Brief: true}, {}} {
		s := summaryText(t, f, o)
		want := []string{"Duration: 60.0s", "Duration: 5.00s"}
		if !o.Brief {
			want = append(want, "(74.4s)")
		}
		for _, want := range want {
			if !strings.Contains(s, want) {
				t.Errorf("brief %v: no %q in\n%s", o.Brief, want, s)
			}
		}
		if strings.Contains(s, "1m0s") || strings.Contains(s, "1m14") {
			t.Errorf("brief %v: a duration in Go's format:\n%s", o.Brief, s)
		}
	}
}
