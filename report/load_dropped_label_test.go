package report

import (
	"strings"
	"testing"
	"time"
)

// A load's ops not started within --load-max-lateness are its Outcomes
// line's "not run": the headline names them so ("Not run (dropped: …)"),
// not "Dropped", a second word for the same ops, with the lateness as a
// figure (conformance --under-load has no --load-max-lateness). Subscribe's dropped
// deliveries keep their own label.
func TestLoadDroppedSaysNotRun(t *testing.T) {
	p := loadPhase()
	p.Counts["accepted"], p.Counts["dropped"] = 597, 3
	p.Params["max_lateness_ns"] = float64(time.Second) // as read back from a results file
	for _, o := range []SummaryOptions{{}, {Brief: true}} {
		s := summaryText(t, oneRun("load", nil, p), o)
		if !strings.Contains(s, "Not run (dropped: not started within 1.00s of their intended time): 3") || strings.Contains(s, "Dropped: 3") {
			t.Errorf("brief %v: want the 3 named as not run:\n%s", o.Brief, s)
		}
	}
}
