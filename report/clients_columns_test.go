package report

import (
	"slices"
	"testing"

	"github.com/relaybench/relaybench/results"
)

// The clients phase runs the query workload: its group table has the
// query shapes table's columns, in its order (one column order for query
// groups), where it listed its counters alphabetically.
func TestClientsGroupColumnsAsQueryShapes(t *testing.T) {
	q := queryPhase(1, 120, 4.67, 200e6/4.67, 0)
	c := q
	c.Name = "clients"
	head := func(p results.Phase) []string {
		tb := groupTable(p.Name, []*relayRuns{{key: "r", runs: []*results.Run{{Phases: []results.Phase{p}}}}})
		if tb == nil {
			t.Fatalf("%s: no group table", p.Name)
		}
		return tb.head
	}
	if qh, ch := head(q), head(c); !slices.Equal(qh, ch) {
		t.Errorf("clients columns %q, want the query shapes' %q", ch, qh)
	}
}
