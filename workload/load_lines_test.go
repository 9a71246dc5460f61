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

// The live lines' latencies keep three significant figures, as every other
// duration relaybench prints (numfmt.Dur: "1.30ms", "10.0ms", never "1.3ms"
// or "10ms"), and a second in which no op was accepted shows "–", not a
// latency of 0s.
func TestLiveLinesLatencyThreeFigures(t *testing.T) {
	l := newLiveStats(constant(t, 10, 3*time.Second), time.Second)
	t0 := mono.Now() - int64(10*time.Second) // every line is due at once
	l.t0.Store(t0)
	l.end.Store(t0 + int64(3*time.Second))
	for s := range 3 {
		l.started[s].Store(10)
		l.sent[s].Store(10)
	}
	l.accepted[0].Store(1)
	l.hist[0].h.Record(int64(1300 * time.Microsecond))
	l.accepted[1].Store(1)
	l.hist[1].h.Record(int64(10 * time.Millisecond))
	var out bytes.Buffer
	l.print(&out, "load")()
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines, want 3:\n%s", len(lines), out.String())
	}
	for i, w := range []string{"p50    1.30ms p99    1.30ms", "p50    10.0ms p99    10.0ms", "p50         – p99         –"} {
		if !strings.Contains(lines[i], w) {
			t.Errorf("line %d: no %q in %q", i, w, lines[i])
		}
	}
}
