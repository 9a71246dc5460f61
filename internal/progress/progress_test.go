package progress

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// The plain lines (not a terminal) count with thousands separators, as the
// summary does: "Signed 3,000 events...".
func TestPlainLinesGroupCounts(t *testing.T) {
	var b bytes.Buffer
	update, stop := New(&b, true).Phase("Signing 3,000 events", "Signed %d events...", 3000)
	update(3000)
	stop()
	want := "Signing 3,000 events...\n  Signed 300 events...\n"
	if s := b.String(); !strings.HasPrefix(s, want) || !strings.HasSuffix(s, "  Signed 2,700 events...\n  Signed 3,000 events...\n") {
		t.Errorf("plain lines:\n%s", s)
	}
}

// A line written while a bar is drawn on a terminal goes above the bar,
// through the bar's own output (a line written beside it was erased by the
// bar's next redraw: mixed's parts vanished); with no bar drawn, it goes
// straight to the writer.
func TestWriteAboveTheBar(t *testing.T) {
	var b bytes.Buffer
	r := New(&b, true)
	r.tty = true // as on a terminal
	update, stop := r.Phase("mixed: 880 operations in three parts of 10s each", "", 880)
	if r.drawn.Load() == nil {
		t.Fatal("no bar drawn")
	}
	if _, err := r.Write([]byte("mixed: together (10s)\n")); err != nil {
		t.Fatal(err)
	}
	update(880)
	stop()
	if r.drawn.Load() != nil {
		t.Error("the bar is still taken as drawn after it stopped")
	}
	r.Write([]byte("after\n"))
	s := b.String()
	if strings.Count(s, "mixed: together (10s)\n") != 1 || !strings.HasSuffix(s, "after\n") {
		t.Errorf("output %q", s)
	}
	// Above the bar: the line, then the bar drawn again below it.
	if i := strings.Index(s, "mixed: together (10s)\n"); i < 0 || !strings.Contains(s[i:], "mixed: 880 operations") {
		t.Errorf("the line is not above the bar: %q", s)
	}
}

// A count line never reads "Executed 1 queries...": below 20 the plain
// lines (every tenth of the total) can count 1. Each says the total:
// compare's read "Executed 2 queries..." where run's read "Executed 1 of
// 10 queries...".
func TestCountFmt(t *testing.T) {
	for _, c := range []struct {
		total int64
		done  int64
		want  string
	}{
		{1, 1, "Executed 1 query..."},
		{5, 1, "Executed 1 of 5 queries..."},
		{19, 1, "Executed 1 of 19 queries..."},
		{20, 2, "Executed 2 of 20 queries..."},
		{100, 10, "Executed 10 of 100 queries..."},
		{10000, 1000, "Executed 1000 of 10,000 queries..."},
	} {
		if got := fmt.Sprintf(CountFmt("Executed", "query", "queries", c.total), c.done); got != c.want {
			t.Errorf("total %d: %q, want %q", c.total, got, c.want)
		}
	}
}

// A phase names what it counts when it starts (Counting): its lines say
// done of total and of what, the makeup of the total included, and the
// label shown (and tapped) is the label alone. A phase that names nothing
// still says its total ("Done 20..." said neither).
func TestCountingNamesTheUnit(t *testing.T) {
	var b bytes.Buffer
	r := New(&b, true)
	var tapped []string
	r.Tap(func(label string, total int64) func(int64) {
		tapped = append(tapped, label)
		return func(int64) {}
	})
	for _, p := range []struct {
		label string
		total int64
	}{
		{Counting("Sending 5 bursts of 1,000 events", "Sent", "event", "events (5 bursts of 1,000 and 1,000 between)", 6000), 6000},
		{Counting("Reconciling (NIP-77) with ws://x", "Ran", "round", "rounds (3 scenarios × 10)", 30), 30},
		{Counting("Odd 100% label", "Ran", "op", "ops at 100%", 10), 10},
		{"Unnamed", 200},
	} {
		update, stop := r.Phase(p.label, "", p.total)
		update(p.total / 10)
		stop()
	}
	for _, want := range []string{
		"Sending 5 bursts of 1,000 events...\n  Sent 600 of 6,000 events (5 bursts of 1,000 and 1,000 between)...\n",
		"Reconciling (NIP-77) with ws://x...\n  Ran 3 of 30 rounds (3 scenarios × 10)...\n",
		"Odd 100% label...\n  Ran 1 of 10 ops at 100%...\n",
		"Unnamed...\n  Done 20 of 200...\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("progress lines:\n%s\nwant:\n%s", b.String(), want)
		}
	}
	if strings.Contains(b.String(), unitSep) || strings.Join(tapped, "|") != "Sending 5 bursts of 1,000 events|Reconciling (NIP-77) with ws://x|Odd 100% label|Unnamed" {
		t.Errorf("label shown or tapped with its count form: %q\n%s", tapped, b.String())
	}
}

// The last plain line says the total when the count reaches it, whatever
// the total: every tenth of 1,938 ends at 1,930, and mixed's plan stopped
// at "Ended 1,930 of 1,938 operations..." though every operation had ended.
func TestPlainLinesEndAtTheTotal(t *testing.T) {
	for _, total := range []int64{1938, 25, 7, 10, 3000} {
		var b bytes.Buffer
		label := Counting("mixed: plan", "Ended", "operation", "operations", total)
		update, stop := New(&b, true).Phase(label, "", total)
		update(total - 1)
		update(total)
		update(total) // again: no line twice
		stop()
		want := fmt.Sprintf("  Ended %s of %s operations...\n", grouped(total), grouped(total))
		if s := b.String(); !strings.HasSuffix(s, want) || strings.Count(s, want) != 1 {
			t.Errorf("total %d: plain lines\n%s", total, s)
		}
	}
}
