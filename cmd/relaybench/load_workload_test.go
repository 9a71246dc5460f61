package main

import (
	"context"
	"testing"
	"time"

	"github.com/alecthomas/kong"

	"github.com/relaybench/relaybench/corpus"
	"github.com/relaybench/relaybench/internal/testrelay"
	"github.com/relaybench/relaybench/runner"
)

// TestLoadAsWorkload: --workloads load runs the open-loop pattern after the
// publish phase, every planned op booked, publish and query kinds alike.
func TestLoadAsWorkload(t *testing.T) {
	if _, err := (workloadFlags{Workloads: []string{"load"}}).build(10000); err != nil {
		t.Fatalf("load is not among the --workloads: %v", err)
	}
	r := testrelay.Start(t, testrelay.Config{Verify: true})
	crp, err := corpus.Load(context.Background(), corpus.Params{Events: 200, AvgSize: 256, Spread: 0.6, Seed: 3, Authors: 20, Anchor: 1793491200}, corpus.Options{CacheDir: "off"})
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"publish", "query"} {
		c := &loadCmd{}
		if err := kong.ApplyDefaults(c); err != nil {
			t.Fatal(err)
		}
		c.Duration, c.BaseRate, c.Peak, c.Kind = 2*time.Second, 40, 40, kind
		cfg := runner.Config{Workloads: []runner.Workload{c.workload()}}
		cfg.Query.Queries = 6
		run, err := runner.Run(context.Background(), crp, cfg, runner.Target{URL: r.URL()})
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		ph := &run.Phases[len(run.Phases)-1]
		if ph.Workload != "load" {
			var names []string
			for _, p := range run.Phases {
				names = append(names, p.Name+"/"+p.Workload)
			}
			t.Fatalf("%s: no load phase last: %v", kind, names)
		}
		if len(ph.Accounts) == 0 {
			t.Fatalf("%s: no accounts", kind)
		}
		for _, a := range ph.Accounts {
			if !a.Balanced() || a.Requested < 70 || a.Accepted != a.Requested {
				t.Errorf("%s: account %+v", kind, a)
			}
		}
	}
}
