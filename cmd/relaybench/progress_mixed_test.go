package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/relaybench/relaybench/internal/progress"
)

// A phase's lines count what the phase names when it starts
// (progress.Counting), with the total, where mixed's read "Done 80...":
// "Ended 88 of 880 operations...", "Read back 80 of 800 events..."; a
// phase that names nothing still says its total.
func TestMixedProgressLines(t *testing.T) {
	var b bytes.Buffer
	prog := progressFunc(progress.New(&b, true))
	prog(progress.Counting("mixed: 880 operations in three parts of 2s each", "Ended", "operation", "operations", 880), 880)(88)
	prog(progress.Counting("mixed: reading back 800 accepted events by id", "Read back", "event", "events", 800), 800)(80)
	prog("Unnamed", 200)(20)
	for _, want := range []string{"mixed: 880 operations in three parts of 2s each...\n  Ended 88 of 880 operations...\n",
		"mixed: reading back 800 accepted events by id...\n  Read back 80 of 800 events...\n",
		"Unnamed...\n  Done 20 of 200...\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("progress lines:\n%s\nwant:\n%s", b.String(), want)
		}
	}
}
