package workload

import (
	"strings"
	"testing"

	"github.com/relaybench/relaybench/internal/testrelay"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/threshold"
)

// A --threshold is checked before the run against what the command writes
// (RunPlan): it must never refuse a figure the command does write. Every
// figure of publish and query (in both modes, with refusals) and of every
// registered workload in every mode (as run --workloads NAME and its own
// command write it: its phases named after it) passes the check, in every
// form a threshold can name it (LATENCY.STAT, latency.LATENCY.STAT, the
// bare STAT, rate, KEY, rates.KEY, counts.KEY, PHASE/GROUP.…).
func TestThresholdPlanAcceptsEveryWrittenFigure(t *testing.T) {
	t.Parallel() // its own relays; it checks which figures are written, never their values
	if testing.Short() {
		t.Skip("every workload on the embedded relay")
	}
	t.Run("publish+query", func(t *testing.T) {
		seen := map[string]bool{}
		for _, mode := range []string{ModeWait, ModePipeline} {
			for _, url := range []string{embeddedURL(t, "memory"), testrelay.Start(t, testrelay.Config{RefuseEvery: 3}).URL()} {
				pr, q := publishAndQuery(t, url, mode, QueryOptions{Limit: 50})
				for _, ph := range []results.Phase{pr.Phase, q} {
					checkPlanned(t, RunPlan(nil), ph, seen)
				}
			}
		}
		// The phases really wrote what the plan must accept.
		for _, f := range []string{"publish.ok.p99", "publish.ok_refused.p99", "query.eose.p99", "query.first_event.p99"} {
			if !seen[f] {
				t.Errorf("no phase wrote %s: the test does not cover it", f)
			}
		}
	})
	var rc relayCase
	for _, c := range relayCases {
		if c.name == "embedded" {
			rc = c
		}
	}
	c := smallCorpus(t)
	for _, d := range Registered() {
		for _, m := range modes(d) {
			t.Run(d.Name+m.name, func(t *testing.T) {
				seen := map[string]bool{}
				// Its phases alone: a keys workload's command writes no
				// publish phase (cmd/relaybench declared.go).
				own := threshold.Plan{Phases: map[string][]string{d.Name: nil}}
				for _, ph := range runCase(t, rc, d, m, c) {
					checkPlanned(t, own, ph, seen)
				}
				if len(seen) == 0 {
					t.Errorf("%s wrote no figure", d.Name)
				}
			})
		}
	}
}

// checkPlanned checks that plan accepts every figure of phase ph, adding
// each to seen.
func checkPlanned(t *testing.T, plan threshold.Plan, ph results.Phase, seen map[string]bool) {
	t.Helper()
	plan.Command = "run"
	for name, f := range threshold.Figures(&results.Run{Phases: []results.Phase{ph}}) {
		if name == "verification" || strings.HasPrefix(name, threshold.ConformanceScope+".") {
			continue
		}
		seen[name] = true
		op := ">="
		if f.Unit == threshold.UnitVerdict {
			op = "!="
		}
		lim := "0"
		switch f.Unit {
		case threshold.UnitNs:
			lim = "0s"
		case threshold.UnitVerdict:
			lim = "failed"
		}
		expr := name + op + lim
		th, err := threshold.Parse(expr)
		if err != nil {
			t.Errorf("phase %s writes %s, which a threshold cannot name: %v", ph.Name, name, err)
			continue
		}
		if err := plan.Check([]threshold.Threshold{th}); err != nil {
			t.Errorf("phase %s writes %s, refused before the run: %v", ph.Name, name, err)
		}
	}
}
