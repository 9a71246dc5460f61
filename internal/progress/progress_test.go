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
