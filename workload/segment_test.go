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
		ph, err := Load(ctxT(t), url, c, o)
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
