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

// The load average is quoted with one decimal, or as many more as keep it
// on its side of the cores: a walk read "its load average below its cores"
// beside "2.0 on 2 cores" (1.96).
func TestLoadClauseKeepsItsSide(t *testing.T) {
	for _, c := range []struct {
		la    float64
		cores int
		want  string
	}{
		{1.6, 2, "was 1.6 on 2 cores"},
		{1.96, 2, "was 1.96 on 2 cores"},
		{1.996, 2, "was 1.996 on 2 cores"},
		{2.04, 2, "was 2.0 on 2 cores"},
		{3.96, 2, "was 4.0 on 2 cores"},
		{0, 2, "was 0.0 on 2 cores"},
	} {
		if got := loadClause(c.la, c.cores); !strings.HasSuffix(got, c.want) {
			t.Errorf("%v on %d: %q, want …%q", c.la, c.cores, got, c.want)
		}
	}
}
