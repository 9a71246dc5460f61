package progress

import (
	"bytes"
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
