package runner

import (
	"strings"
	"testing"

	"github.com/relaybench/relaybench/results"
)

// A long set-up is said in the duration format of every other note
// ("310ms", "1.38s"), not "0.31 s" (a walk read both side by side).
func TestNoteSetupDurationFormat(t *testing.T) {
	for _, c := range []struct {
		setup float64
		want  string
	}{{0.31, "took 310ms ("}, {1.381, "took 1.38s ("}} {
		ph := results.NewPhase("p", "publish")
		ph.Duration = 1e9
		ph.SetupSecs = c.setup
		noteSetup(&ph)
		if got := strings.Join(ph.Notes, "\n"); !strings.Contains(got, c.want) {
			t.Errorf("set-up %v s: %q, want %q", c.setup, got, c.want)
		}
	}
}
