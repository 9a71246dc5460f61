package report

import (
	"strings"
	"testing"
)

// A load's ops not started within --load-max-lateness are its Outcomes
// line's "not run": the headline names them so ("Not run (dropped: …)"),
// not "Dropped", a second word for the same ops. Subscribe's dropped
// deliveries keep their own label.
func TestLoadDroppedSaysNotRun(t *testing.T) {
	p := loadPhase()
	p.Counts["accepted"], p.Counts["dropped"] = 597, 3
	for _, o := range []SummaryOptions{{}, {Brief: true}} {
		s := summaryText(t, oneRun("load", nil, p), o)
		if !strings.Contains(s, "Not run (dropped: not started within --load-max-lateness): 3") || strings.Contains(s, "Dropped: 3") {
			t.Errorf("brief %v: want the 3 named as not run:\n%s", o.Brief, s)
		}
	}
}
