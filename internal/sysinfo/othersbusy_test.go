package sysinfo

import (
	"strings"
	"testing"
)

// TestOthersBusyNeedsContention: other processes are said to have competed
// for the cores only when the load average exceeds what relaybench and the
// relay kept busy by a core or more and is at least the machine's cores
// (below that a core was free on average: nobody waited for one); the
// clause names the load average and the cores.
func TestOthersBusyNeedsContention(t *testing.T) {
	for _, c := range []struct {
		la    float64
		cores int
		sides float64
		want  string // "" : not busy
	}{
		{14.35, 2, 0.26, "the machine's 1-minute load average was 14.3 on 2 cores: " + OthersCompeted},
		{2.5, 2, 0.34, "load average was 2.5 on 2 cores"},
		{2.0, 2, 1.5, ""},  // the two sides account for all but half a core
		{3.0, 16, 0.5, ""}, // 13 cores free on average: nobody waited
		{17.0, 16, 0.5, "load average was 17.0 on 16 cores"},
		{0.4, 2, 0.1, ""}, // a quiet machine
	} {
		got := othersBusy(c.la, c.cores, c.sides)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("load average %.2f on %d cores, sides %.2f: %q, want %q", c.la, c.cores, c.sides, got, c.want)
		}
	}
}
