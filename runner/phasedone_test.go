package runner

import (
	"context"
	"testing"
	"time"

	"github.com/relaybench/relaybench/corpus"
	"github.com/relaybench/relaybench/internal/testrelay"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/workload"
)

// smallCorpus is a corpus of events notes of exactly avgSize bytes by
// authors keys, the same every run (seed and anchor fixed), not cached.
func smallCorpus(t *testing.T, ctx context.Context, events, authors, avgSize int) *corpus.Corpus {
	t.Helper()
	c, err := corpus.Generate(ctx, corpus.Params{Seed: 3, Events: events, Authors: authors, AvgSize: avgSize,
		Anchor: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC).Unix()}.WithDefaults(), corpus.Options{CacheDir: "off"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestPhaseDoneAsEachFinishes: Config.Started is told of the relay before
// anything, and PhaseDone of each phase as it finishes, before the next
// one starts: in order, the phases the run returns.
func TestPhaseDoneAsEachFinishes(t *testing.T) {
	r := testrelay.Start(t, testrelay.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := smallCorpus(t, ctx, 60, 5, 100)
	var told []string
	var started []string
	during := ""
	w := Workload{Name: "probe", Run: func(ctx context.Context, env Env) ([]results.Phase, error) {
		during = ""
		for _, n := range told {
			during += n + " "
		}
		return []results.Phase{results.NewPhase("probe", "probe")}, nil
	}}
	cfg := Config{Query: workload.QueryOptions{Queries: 10, Limit: 20}, Workloads: []Workload{w},
		Started: func(t Target) { started = append(started, t.URL) },
		PhaseDone: func(tg Target, phs []results.Phase) {
			for _, ph := range phs {
				told = append(told, ph.Name)
			}
			if tg.URL != r.URL() {
				t.Errorf("phase of %s told for %s", tg.URL, r.URL())
			}
		}}
	run, err := Run(ctx, c, cfg, Target{URL: r.URL()})
	if err != nil {
		t.Fatal(err)
	}
	if len(started) != 1 || started[0] != r.URL() {
		t.Errorf("started %v", started)
	}
	if during != "publish query " {
		t.Errorf("when the workload ran, the phases told were %q, want publish and query", during)
	}
	if len(told) != len(run.Phases) {
		t.Fatalf("told %v, the run has %d phases", told, len(run.Phases))
	}
	for i, ph := range run.Phases {
		if told[i] != ph.Name {
			t.Errorf("told %v, the run's phase %d is %s", told, i, ph.Name)
		}
	}
}
