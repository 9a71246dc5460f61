package workload

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/relaybench/relaybench/internal/mono"
)

// The live lines group thousands as the summary does ("sent   2,999/s"),
// in whole seconds and in the last, partial one ("intended 1,501"): no count
// of four digits or more is printed bare.
func TestLiveLinesGroupThousands(t *testing.T) {
	l := newLiveStats(constant(t, 3000, 2500*time.Millisecond), time.Second)
	t0 := mono.Now() - int64(5*time.Second) // every line is due at once
	l.t0.Store(t0)
	l.end.Store(t0 + int64(2500*time.Millisecond))
	for s, n := range []int64{2999, 3000, 1500} {
		l.started[s].Store(n)
		l.sent[s].Store(n)
		l.accepted[s].Store(n)
	}
	l.maxIn[0].Store(1024)
	var out bytes.Buffer
	l.print(&out, "load")()
	got := out.String()
	for _, w := range []string{"sent   2,999/s accepted   2,999/s", "in-flight 1,024", "last 0.50 s: intended 1,501 sent 1,500 accepted 1,500"} {
		if !strings.Contains(got, w) {
			t.Errorf("no %q in\n%s", w, got)
		}
	}
	if bare := regexp.MustCompile(`\b\d{4,}\b`).FindString(got); bare != "" {
		t.Errorf("%s printed without separators in\n%s", bare, got)
	}
}
