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
	for _, w := range []string{"sent   2,999/s in-flight 1,024 ended: accepted   2,999/s", "last 500ms: intended 1,501 dropped 1 sent 1,500 in-flight 0 ended: accepted 1,500"} {
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

// A live line keeps what was sent in a second apart from what ended in it:
// an OK read in the last second for an op sent the second before must not
// read "sent 1 accepted 2" (more accepted than sent). The ops' counts come
// in an op's order, those that ended under "ended:".
func TestLiveLinesSayWhatEnded(t *testing.T) {
	l := newLiveStats(constant(t, 10, 1050*time.Millisecond), time.Second)
	t0 := mono.Now() - int64(5*time.Second) // every line is due at once
	l.t0.Store(t0)
	l.end.Store(t0 + int64(1050*time.Millisecond))
	l.started[0].Store(10)
	l.sent[0].Store(10)
	l.accepted[0].Store(9)
	l.started[1].Store(1)
	l.sent[1].Store(1)
	l.accepted[1].Store(2) // the last op of second 0 and the one of second 1
	l.maxIn[1].Store(1)
	var out bytes.Buffer
	l.print(&out, "load")()
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines, want 2:\n%s", len(lines), out.String())
	}
	if w := "last 50.0ms: intended 1 dropped 0 sent 1 in-flight 1 ended: accepted 2 refused 0 failed 0"; !strings.Contains(lines[1], w) {
		t.Errorf("last line %q, want it to say %q", lines[1], w)
	}
	if strings.Contains(out.String(), "sent 1 accepted") {
		t.Errorf("accepted read as a share of sent:\n%s", out.String())
	}
}
