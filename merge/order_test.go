package merge

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/relaybench/relaybench/results"
)

// Merged query-shape groups come in the order a single run gives them (the
// phase's params.shapes), not in the order the segments first showed them:
// each segment runs some shapes of the rotation.
func TestMergedShapesInSingleRunOrder(t *testing.T) {
	a, b := segFile(0, 2, t0, []int64{1, 2}), segFile(1, 2, t0.Add(time.Second), []int64{3})
	shapes := []any{"kind", "time-range", "tag-p", "tag-t", "author", "complex"} // as a results file reads
	group := func(names ...string) []results.Group {
		var gs []results.Group
		for _, n := range names {
			gs = append(gs, results.Group{Name: n, Counts: map[string]int64{"queries": 1}})
		}
		return gs
	}
	for _, f := range []*results.File{a, b} {
		f.Runs[0].Phases[0].Params["shapes"] = shapes
	}
	a.Runs[0].Phases[0].Groups = group("kind", "tag-p", "other", "author")
	b.Runs[0].Phases[0].Groups = group("time-range", "tag-t", "complex")
	out, err := Merge(context.Background(), []Input{{"a", a}, {"b", b}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, g := range out.Runs[0].Phases[0].Groups {
		got = append(got, g.Name)
	}
	want := []string{"kind", "time-range", "tag-p", "tag-t", "author", "complex", "other"}
	if !slices.Equal(got, want) {
		t.Fatalf("merged groups %v, want %v", got, want)
	}
}
