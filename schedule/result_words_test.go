package schedule

import (
	"strings"
	"testing"
	"time"

	"github.com/relaybench/relaybench/metrics"
)

// A count of one operation is said in the singular in the schedule's notes
// and in its diagnosis ("1 operation dropped", never "1 operations").
func TestNotesSayOneOperation(t *testing.T) {
	r := &Result{Pool: 4, MaxInFlight: 4, Dropped: 1, Unfinished: 1, Failed: 1, Warmup: time.Second, WarmupOps: 1,
		MaxLateness: time.Second, Drain: 10 * time.Second, Lateness: metrics.NewHistogram(), DispatchLateness: metrics.NewHistogram(),
		Latency: metrics.NewHistogram(), Uncorrected: metrics.NewHistogram()}
	r.diagnose()
	all := append([]string{r.ClientLimitedWhy}, r.notes()...)
	for _, want := range []string{"1 operation dropped (not started within 1s)", "1 operation dropped (not started within 1s of their intended time)",
		"1 operation not finished when the 10s drain ended", "1 operation failed without a reply", "warm-up (1 operation)"} {
		found := false
		for _, n := range all {
			found = found || strings.Contains(n, want)
		}
		if !found {
			t.Errorf("no %q in %q", want, all)
		}
	}
	for _, n := range all {
		if strings.Contains(n, "1 operations") {
			t.Errorf("plural for one: %q", n)
		}
	}
}
