package judge

import (
	"fmt"
	"math"
	"strings"

	"github.com/relaybench/relaybench/internal/numfmt"
	"github.com/relaybench/relaybench/internal/safe"
	"github.com/relaybench/relaybench/results"
)

// A find-max search (workload.FindMax) measures the relay by driving it
// until a step fails: a step the relay failed on a quiet machine is the
// search's answer, never work the relay prevented. A search that stopped
// at a step the relay is not shown to have failed did not find the relay's
// figure, so its requested work did not run, and load's booking of the
// same step says whose doing that was:
//
//   - the client limited it (its CPU, its dispatcher, its pool), or it was
//     late from outside its own work on a machine busy with other
//     processes: relaybench could not run the requested work, the relay
//     did not prevent it (Error, as load's WhyClientDrop; ClientShort);
//   - the relay's replies kept its pool full while other processes
//     competed for the machine's cores: the relay or the machine
//     (Incomplete, as load's WhyMachineDrop; findMaxPrevented).
//
// The step is the search's group with pass 0 and client_limited 1 (there
// is at most one: it ends the search); machine_busy marks it decided by
// the machine's load, relay_or_machine by the relay's replies there. A
// search stopped by --max-rate, --max-steps or --load-max-events ended
// where the user bounded it: no such group, nothing held against the run.

// findMaxStop is the step find-max phase ph stopped at short of the
// relay's figure, nil when it did not (or ph is no find-max phase).
func findMaxStop(ph *results.Phase) *results.Group {
	if ph.Workload != "find-max" || !ph.ClientLimited {
		return nil
	}
	for i := range ph.Groups {
		g := &ph.Groups[i]
		if g.Counts["pass"] == 0 && g.Counts["client_limited"] > 0 {
			return g
		}
	}
	return nil
}

// findMaxShort is ClientShort of a find-max phase: the search stopped at a
// step the client limited, or one it was late for from outside its own
// work on a busy machine ("" when not).
func findMaxShort(ph *results.Phase) string {
	g := findMaxStop(ph)
	if g == nil || g.Counts["relay_or_machine"] > 0 {
		return ""
	}
	who := "a step the client limited"
	if g.Counts["machine_busy"] > 0 {
		who = "a step the busy machine limited" + loadAverage(ph) // the client late from outside its own work
	}
	return fmt.Sprintf("the search stopped at %s/s, %s: %s", rate(g.Rates["offered_per_sec"]), who, lowerBound(ph))
}

// findMaxPrevented is the reason of a find-max phase that stopped at a
// step the relay's replies kept full while other processes competed for
// the machine's cores: the relay or the machine prevented the search
// ("" when not).
func findMaxPrevented(ph *results.Phase) string {
	g := findMaxStop(ph)
	if g == nil || g.Counts["relay_or_machine"] == 0 {
		return ""
	}
	return fmt.Sprintf("the search stopped at %s/s, a step the relay or the busy machine limited%s: %s",
		rate(g.Rates["offered_per_sec"]), loadAverage(ph), lowerBound(ph)) // the relay's replies slow: it may have waited for a CPU
}

// lowerBound says what a search stopped short of the relay's figure
// answered.
func lowerBound(ph *results.Phase) string {
	if m := ph.Rates[results.RateMaxRate]; m > 0 {
		return fmt.Sprintf("the answer ≥ %s events/s is a lower bound", rate(m))
	}
	return "no rate passed (capacity unknown)"
}

// loadAverage is " (load average 7.5 on 2 cores)" from the note of a
// search the machine's load stopped (sysinfo.OthersBusy's clause), ""
// when no note quotes it.
func loadAverage(ph *results.Phase) string {
	const start = "1-minute load average was "
	for _, n := range ph.Notes {
		if i := strings.Index(n, start); i >= 0 {
			la, _, ok := strings.Cut(n[i+len(start):], ":")
			if ok && len(la) < 40 {
				return " (load average " + safe.Line(la) + ")"
			}
		}
	}
	return ""
}

// rate is a search's rate as its notes give it: whole and grouped
// ("1,250"), two decimals under 10 when not whole.
func rate(r float64) string {
	if r < 10 && r != math.Trunc(r) {
		return fmt.Sprintf("%.2f", r)
	}
	return numfmt.Group(int64(math.Round(r)))
}
