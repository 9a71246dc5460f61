package workload

import (
	"strings"
	"testing"
	"time"

	"github.com/relaybench/relaybench/results"
)

// find-max's target line says an allowance of zero as "none" ("≤ 0
// dropped" read oddly), and a real one as "≤ N".
func TestFindMaxTargetAllowances(t *testing.T) {
	for _, c := range []struct {
		drops, refusals int64
		want            string
	}{
		{0, 0, "(target: corrected OK p99 ≤ 50ms, none dropped, none refused, none failed;"},
		{5, 1200, "(target: corrected OK p99 ≤ 50ms, ≤ 5 dropped, ≤ 1,200 refused, none failed;"},
	} {
		var ph results.Phase
		res := &FindMaxResult{Max: 200, Answer: "200 events/s"}
		buildFindMaxPhase(&ph, res, FindMaxOptions{P99: 50 * time.Millisecond, StepDuration: time.Second, MaxDrops: c.drops, MaxRefusals: c.refusals}, "")
		notes := strings.Join(ph.Notes, "\n")
		if !strings.Contains(notes, c.want) || strings.Contains(notes, "≤ 0") {
			t.Errorf("drops %d, refusals %d: want %q in\n%s", c.drops, c.refusals, c.want, notes)
		}
	}
}
