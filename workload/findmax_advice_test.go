package workload

import (
	"strings"
	"testing"
	"time"

	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/schedule"
)

// A search a client-limited step stopped gives the remedy load's judgement
// of that step implies: a step late from outside the client's own work
// (load's quietLateNote) asks for a quieter machine, not more CPU; a busy
// client for more CPU or a bigger pool; a search stopped by the event cap
// (no such step) only that its answer is a lower bound.
func TestFindMaxClientLimitedAdvice(t *testing.T) {
	step := func(note string) Step {
		ph := results.NewPhase("find-max/110", "load")
		ph.Duration = int64(10 * time.Second)
		ph.Resources = &results.Resources{ClientCPUSecs: 0.4}
		ph.Notes = []string{note}
		return Step{Rate: 110, Phase: ph, ClientLimited: true}
	}
	pass := Step{Rate: 100, Pass: true}
	quiet := quietLateNote(&schedule.Result{Pool: 10, MaxInFlight: 2}, "CPU: client 0.04 of 2 cores")
	busy := "client-limited: the client kept 1.95 of its 2 cores busy"
	more := "give the client more CPU"
	for _, c := range []struct {
		name      string
		steps     []Step
		want, not string
	}{
		{"late from outside", []Step{pass, step(quiet)}, "at 110/s the client used 0.04 cores and " + LateFromOutside + lateFromOthers + ": a quieter machine avoids it", more},
		{"busy client", []Step{pass, step(busy)}, more, "quieter"},
		{"event cap", []Step{pass}, "not a relay figure", more},
	} {
		n := clientLimitedNote(&FindMaxResult{Steps: c.steps, ClientLimited: true})
		if !strings.Contains(n, c.want) || strings.Contains(n, c.not) {
			t.Errorf("%s: %q\nwant %q, not %q", c.name, n, c.want, c.not)
		}
	}
}
