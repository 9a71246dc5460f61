package main

import (
	"strings"
	"testing"

	"github.com/relaybench/relaybench/results"
)

// judgeNotes are the openings of the notes the runner's client-CPU
// judgement writes, one per timed phase.
var judgeNotes = []string{"client-limited:", "client CPU:", "relay-limited", "neither side saturated", "too short to judge"}

// Every timed phase, count, search and query included, is judged once, by
// the runner (which honours --client-cpus): its client CPU use is recorded
// and exactly one note says which side, if any, was CPU-bound.
func TestClientCPUJudgedOncePerPhase(t *testing.T) {
	res, f := nipRun(t, "run", "--queries", "12", "--workloads", "count,search")
	if res.code != 0 {
		t.Fatalf("exit %d\n%s", res.code, lastLines(res.stderr, 20))
	}
	for _, name := range []string{"publish", "query", "count", "search"} {
		ph := nipPhase(t, f, name)
		if ph.Duration <= 0 || ph.Resources == nil || ph.Resources.ClientCPUSecs <= 0 {
			t.Errorf("%s: duration %d, resources %+v: the client's CPU over the phase not recorded", name, ph.Duration, ph.Resources)
			continue
		}
		if got := judgements(ph); got != 1 {
			t.Errorf("%s: %d client-CPU judgements, want 1: %q", name, got, ph.Notes)
		}
	}
}

func judgements(ph *results.Phase) int {
	n := 0
	for _, note := range ph.Notes {
		for _, p := range judgeNotes {
			if strings.HasPrefix(note, p) {
				n++
				break
			}
		}
	}
	return n
}
