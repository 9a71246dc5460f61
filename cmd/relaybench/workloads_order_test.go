package main

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/workload"
)

// run and compare run the workloads that judge answers against the
// corpus's set before those that publish events of their own: a sweep
// before count made count call the relay's correct counts wrong (its fresh
// events read as extra). Within each group the order given is kept.
func TestWorkloadsRunOrder(t *testing.T) {
	ws, err := workloadFlags{Workloads: []string{"sweep", "count", "negentropy", "burst", "clients", "mixed", "search"}}.build(10000)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range ws {
		got = append(got, w.Name)
	}
	want := []string{"count", "clients", "search", "negentropy", "sweep", "burst", "mixed"}
	if !slices.Equal(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
}

// run and compare's subscribe publishes as many fresh events as --events
// (the corpus has), where it published subscribe's own 10,000 whatever
// --events said beside a sweep of 2,000 per size; sweep keeps its events
// per size, as --workloads' help says.
func TestWorkloadsSubscribeFollowsEvents(t *testing.T) {
	cfgs, err := workloadFlags{Workloads: []string{"subscribe", "sweep"}}.configs(2000)
	if err != nil || len(cfgs) != 2 {
		t.Fatalf("%d workloads, %v", len(cfgs), err)
	}
	if o, ok := cfgs[0].cfg.(*workload.SubscribeOptions); !ok || o.Events != 2000 || o.EventCount() != 2000 {
		t.Errorf("subscribe: %+v, want 2,000 events", cfgs[0].cfg)
	}
	if o, ok := cfgs[1].cfg.(*workload.SweepOptions); !ok || o.Events != 2000 {
		t.Errorf("sweep: %+v, want its 2,000 per size", cfgs[1].cfg)
	}
	dir := t.TempDir()
	res := runCLI(t, "run", "--events", "40", "--skip-query", "--workloads", "subscribe", "--json", filepath.Join(dir, "r.json"),
		"--cache-dir", "off", "--out", dir, "--no-progress")
	f, err := results.Read(filepath.Join(dir, "r.json"))
	if err != nil {
		t.Fatalf("exit %d, %v\n%s", res.code, err, res.stderr)
	}
	ph := f.Runs[0].Phase("subscribe")
	if ph == nil || ph.Account(results.OpEvent) == nil || ph.Account(results.OpEvent).Requested != 40 {
		t.Fatalf("subscribe phase %+v, want 40 events requested", ph)
	}
}
