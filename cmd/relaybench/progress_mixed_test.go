package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/relaybench/relaybench/internal/progress"
)

// mixed's plan and read-back count what they count, with the total, where
// they read "Done 80...": "Ended 88 of 880 operations...", "Read back 80
// of 800 events...".
func TestMixedProgressLines(t *testing.T) {
	var b bytes.Buffer
	prog := progressFunc(progress.New(&b, true))
	prog("mixed: 880 operations in three parts of 2s each", 880)(88)
	prog("mixed: reading back 800 accepted events by id", 800)(80)
	for _, want := range []string{"mixed: 880 operations in three parts of 2s each...\n  Ended 88 of 880 operations...\n",
		"mixed: reading back 800 accepted events by id...\n  Read back 80 of 800 events...\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("progress lines:\n%s\nwant:\n%s", b.String(), want)
		}
	}
}
