package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/relaybench/relaybench/results"
)

// TestSegmentSimulation is the Kubernetes Indexed Job of deploy/ simulated
// on one machine: three `relaybench run --segment I/3 --start-at T`
// processes load one embedded relay together, and a single `relaybench run`
// of the same test loads a fresh one. The segments' shares must be disjoint
// and add up exactly to the single run: events requested and accepted, OK
// histogram counts, queries and EOSE histogram counts. Then `relaybench
// merge` of the three files must equal the single run on the same figures,
// with its verification passed.
func TestSegmentSimulation(t *testing.T) {
	t.Parallel() // it waits for --start-at and --query-at: the package's other parallel tests run meanwhile
	sim := newSegmentSim(t)
	const segments, events, queries = 3, 900, 30
	common := []string{"run", "--events", fmt.Sprint(events), "--size", "300", "--authors", "40", "--seed", "7",
		"--anchor", "2026-01-01T00:00:00Z", "--cache-dir", sim.cache, "--concurrency", "5", "--queries", fmt.Sprint(queries),
		"--no-progress", "--quiet"}

	// The single run first: it signs the corpus into the cache the segments load.
	one := sim.runSingle(t, common)

	// The segments: a common start far enough ahead for every process to
	// load the corpus and dial (a late one is recorded, not a failure here),
	// and a common start of the queries after every segment published (if
	// one were still publishing, the merge would allow its events).
	startAt := time.Now().Add(8 * time.Second).UTC().Format(time.RFC3339Nano)
	paths := sim.runSegments(t, "seg", segments, common, "--start-at", startAt, "--query-at", "+10s")
	var files []*results.File
	for _, path := range paths {
		files = append(files, readResults(t, path))
	}

	// Each segment knows which it was and when they all began.
	var stored []bool
	for i, f := range files {
		s := f.Runs[0].Segment
		if s == nil || s.Index != i || s.Count != segments || s.StartAt == nil || s.StartAt.Format(time.RFC3339Nano) != startAt {
			t.Fatalf("segment %d records %+v, want %d/%d starting at %s", i, s, i, segments, startAt)
		}
		if s.QueryAt == nil || !s.QueryAt.Equal(s.StartAt.Add(10*time.Second)) {
			t.Errorf("segment %d: query_at %v, want start_at + 10 s", i, s.QueryAt)
		}
		if s.ClockOffsetSource != "relay-date" || s.ClockOffsetErrNs <= 0 {
			t.Errorf("segment %d: clock offset not measured against the embedded relay's Date header: %+v", i, s)
		}
		ph := f.Runs[0].Phase("publish")
		set, err := results.DecodeIndexSet(ph.Stored, events)
		if err != nil {
			t.Fatalf("segment %d stored set: %v", i, err)
		}
		if stored == nil {
			stored = make([]bool, events)
		}
		for k, in := range set {
			if in && k%segments != i {
				t.Errorf("segment %d stored corpus index %d, which is segment %d's", i, k, k%segments)
			}
			if in && stored[k] {
				t.Errorf("corpus index %d published by two segments", k)
			}
			stored[k] = stored[k] || in
		}
	}

	// The shares add up exactly to the single run.
	sum := func(phase, op string, get func(ph *results.Phase, a *results.Account) int64) (segs, single int64) {
		for _, f := range files {
			ph := f.Runs[0].Phase(phase)
			segs += get(ph, ph.Account(op))
		}
		ph := one.Runs[0].Phase(phase)
		return segs, get(ph, ph.Account(op))
	}
	checks := []struct {
		name, phase, op string
		get             func(ph *results.Phase, a *results.Account) int64
	}{
		{"events requested", "publish", results.OpEvent, func(_ *results.Phase, a *results.Account) int64 { return a.Requested }},
		{"events accepted", "publish", results.OpEvent, func(_ *results.Phase, a *results.Account) int64 { return a.Accepted }},
		{"accepted count", "publish", results.OpEvent, func(ph *results.Phase, _ *results.Account) int64 { return ph.Counts["accepted"] }},
		{"OK histogram count", "publish", results.OpEvent, func(ph *results.Phase, _ *results.Account) int64 { return ph.Latency["ok"].Count }},
		{"queries requested", "query", results.OpQuery, func(_ *results.Phase, a *results.Account) int64 { return a.Requested }},
		{"queries answered", "query", results.OpQuery, func(_ *results.Phase, a *results.Account) int64 { return a.Accepted }},
		{"EOSE histogram count", "query", results.OpQuery, func(ph *results.Phase, _ *results.Account) int64 { return ph.Latency["eose"].Count }},
	}
	for _, c := range checks {
		if segs, single := sum(c.phase, c.op, c.get); segs != single {
			t.Errorf("%s: segments add up to %d, the single run has %d", c.name, segs, single)
		}
	}
	// Every segment's query phase began at --query-at (none was held up by
	// its own publishing), so every query ran after all events were stored:
	// the same filters then return exactly the single run's events.
	onTime := true
	for _, f := range files {
		onTime = onTime && f.Runs[0].Segment.QueryLateNs < int64(time.Second)
	}
	if segs, single := sum("query", results.OpQuery, func(ph *results.Phase, _ *results.Account) int64 { return ph.Counts["events_returned"] }); onTime && segs != single {
		t.Errorf("events returned: segments add up to %d, the single run has %d (the same filters over the same stored events)", segs, single)
	} else if !onTime {
		t.Logf("a segment's query phase began over 1 s after --query-at (machine loaded): events returned not compared (%d vs %d)", segs, single)
	}
	n := 0
	for _, in := range stored {
		if in {
			n++
		}
	}
	if acc := one.Runs[0].Phase("publish").Account(results.OpEvent).Accepted; int64(n) != acc {
		t.Errorf("the segments stored %d distinct events, the single run accepted %d", n, acc)
	}

	// The merge of the three files is the single run.
	merged, code, stderr := sim.merge(t, paths, "--cache-dir", sim.cache)
	if code == 2 && strings.Contains(stderr, "merge") && (strings.Contains(stderr, "unexpected argument") || strings.Contains(stderr, "unknown")) {
		t.Skip("waits for `relaybench merge` (the merge helper's command): the segments added up exactly")
	}
	m, err := results.Read(merged)
	if code != 0 {
		if err == nil {
			q := m.Runs[0].Phase("query")
			t.Logf("merged query phase: notes %q, errors %q, verification %+v", q.Notes, q.Errors, q.Verification)
		}
		t.Fatalf("merge: exit %d: %s", code, stderr)
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range checks {
		mph, oph := m.Runs[0].Phase(c.phase), one.Runs[0].Phase(c.phase)
		if got, want := c.get(mph, mph.Account(c.op)), c.get(oph, oph.Account(c.op)); got != want {
			t.Errorf("merged %s: %d, the single run has %d", c.name, got, want)
		}
	}
	if v := m.Runs[0].Phase("query").Verification; v == nil || !v.Verified || !v.Passed {
		t.Errorf("merged query verification: %+v, want verified and passed", v)
	}
}
