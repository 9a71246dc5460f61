package main

import (
	"testing"
	"time"

	"github.com/relaybench/relaybench/results"
)

// TestSubscribeSegmentSimulation: three `relaybench subscribe --segment I/3
// --start-at T --rate R` processes against one embedded relay, merged with
// `relaybench merge`, equal a single `subscribe` with the same flags
// against a fresh relay: events published and accepted, owed deliveries,
// deliveries, missing (0), and the deliver histogram's count. Every
// segment's subscribers receive the other segments' events.
func TestSubscribeSegmentSimulation(t *testing.T) {
	t.Parallel() // it waits for --start-at: the package's other parallel tests run meanwhile
	sim := newSegmentSim(t)
	const segments = 3
	common := []string{"subscribe", "--sub-count", "8", "--publishers", "3", "--channels", "4", "--overlap", "2", "--filter", "mix",
		"--rate", "200", "--events", "300", "--size", "200", "--authors", "20", "--seed", "7", "--grace", "3s",
		"--cache-dir", sim.cache, "--no-progress", "--quiet"}

	// The single run first (it also fills the key cache the segments load).
	one := sim.runSingle(t, common, "--start-at", time.Now().Add(4*time.Second).UTC().Format(time.RFC3339Nano))
	startAt := time.Now().Add(6 * time.Second).UTC().Format(time.RFC3339Nano)
	paths := sim.runSegments(t, "sub", segments, common, "--start-at", startAt)
	merged, code, stderr := sim.merge(t, paths)
	if code != 0 {
		t.Fatalf("merge: exit %d: %s", code, stderr)
	}
	m := readResults(t, merged)
	sp, mp := one.Runs[0].Phase("subscribe"), m.Runs[0].Phase("subscribe")
	if sp == nil || mp == nil {
		t.Fatalf("no subscribe phase: single %v, merged %v", sp != nil, mp != nil)
	}
	figures := []struct {
		name string
		get  func(ph *results.Phase) int64
	}{
		{"events requested", func(ph *results.Phase) int64 { return ph.Account(results.OpEvent).Requested }},
		{"events accepted", func(ph *results.Phase) int64 { return ph.Account(results.OpEvent).Accepted }},
		{"subscriptions open", func(ph *results.Phase) int64 { return ph.Account(results.OpSub).Accepted }},
		{"deliveries owed", func(ph *results.Phase) int64 { return ph.Account(results.OpDelivery).Requested }},
		{"deliveries", func(ph *results.Phase) int64 { return ph.Counts["deliveries"] }},
		{"expected", func(ph *results.Phase) int64 { return ph.Counts["expected"] }},
		{"missing", func(ph *results.Phase) int64 { return ph.Counts["missing"] }},
		{"deliver histogram count", func(ph *results.Phase) int64 { return ph.Latency["deliver"].Count }},
	}
	for _, f := range figures {
		got, want := f.get(mp), f.get(sp)
		t.Logf("%s: merged %d, single %d", f.name, got, want)
		if got != want {
			t.Errorf("%s: merged %d, the single run has %d", f.name, got, want)
		}
	}
	if mp.Counts["missing"] != 0 || !mp.Verification.Passed {
		t.Errorf("merged verification %+v, want passed with nothing missing", mp.Verification)
	}
	if a := mp.Account(results.OpDelivery); !a.Balanced() {
		t.Errorf("merged delivery account does not add up: %+v", a)
	}
	// Every segment's subscribers got events the other segments published.
	for i, path := range paths {
		ph := readResults(t, path).Runs[0].Phase("subscribe")
		if ph.Deliveries == nil || len(ph.Deliveries.Subs) != (8+segments-1-i)/segments {
			t.Fatalf("segment %d: delivery record %+v", i, ph.Deliveries)
		}
		if got := ph.Account(results.OpEvent).Requested; got != int64((300+segments-1-i)/segments) {
			t.Errorf("segment %d published %d events, want its share", i, got)
		}
	}
	for _, g := range mp.Groups {
		t.Logf("merged group %s: %v deliver p50 %v", g.Name, g.Counts, time.Duration(g.Latency["deliver"].Percentiles["50"]))
	}
}
