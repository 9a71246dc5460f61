package workload

import (
	"testing"
	"time"

	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/schedule"
)

// TestLoadSegmentsAddUp: three segments of a mixed open-loop load against
// one relay plan and send, together, exactly the single run's operations:
// publishes and queries requested add up to the pattern's, each segment with
// its share of the pool and connections, and no event is published twice.
func TestLoadSegmentsAddUp(t *testing.T) {
	url := embeddedURL(t, "memory")
	c := smallCorpus(t)
	p := constant(t, 90, time.Second)
	total := schedule.Count(p)
	base := LoadOptions{Kind: LoadMixed, PublishParts: 2, QueryParts: 1, Pattern: p, Pool: 30, Connections: 4,
		Size: 200, MaxLateness: 20 * time.Second, Source: c.Events}
	want := map[string]int64{results.OpEvent: 2 * total / 3, results.OpQuery: total / 3}
	got := map[string]int64{}
	for i := range 3 {
		o := base
		o.Segment = Segment{Index: i, Count: 3}
		ph, err := Load(testCtx(t), url, c, o)
		if err != nil {
			t.Fatal(err)
		}
		checkBalance(t, ph)
		if ph.Counts["planned"] != total/3 {
			t.Errorf("segment %d planned %d of %d", i, ph.Counts["planned"], total)
		}
		for _, a := range ph.Accounts {
			got[a.Op] += a.Requested
			if a.Op == results.OpEvent && a.Refused > 0 {
				t.Errorf("segment %d: %d events refused (published twice?): %v", i, a.Refused, a.RefusedBy)
			}
		}
		if c := ph.Params["connections"]; c != nil && c != 2 && c != 1 {
			t.Errorf("segment %d: connections %v, want its share of 4 (2, 1, 1)", i, c)
		}
	}
	for op, n := range want {
		if got[op] != n {
			t.Errorf("%s: segments requested %d, the pattern has %d", op, got[op], n)
		}
	}
}

// The queries of the segments of a mixed load are the single run's: each
// query operation's number among the queries (which picks its filter) is
// the same whichever segment sends it, so the segments together send every
// query number once.
func TestLoadSegmentQueriesAreTheSingleRunsQueries(t *testing.T) {
	o := LoadOptions{Kind: LoadMixed, PublishParts: 3, QueryParts: 2}
	const total = 1000
	var single []int64
	for k := int64(0); k < total; k++ {
		if o.publishes(k+1) == o.publishes(k) {
			single = append(single, o.queryOrdinal(k))
		}
	}
	seen := map[int64]int{}
	for i := range 4 {
		s := Segment{Index: i, Count: 4}
		for k := int64(0); k < total; k++ {
			if s.Owns(k) && o.publishes(k+1) == o.publishes(k) {
				seen[o.queryOrdinal(k)]++
			}
		}
	}
	if len(seen) != len(single) {
		t.Fatalf("segments sent %d distinct query numbers, a single run %d", len(seen), len(single))
	}
	for n, q := range single {
		if q != int64(n) || seen[q] != 1 {
			t.Fatalf("query %d: ordinal %d, sent %d times by the segments", n, q, seen[q])
		}
	}
}
