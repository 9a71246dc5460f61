package main

import (
	"slices"
	"testing"
)

// run and compare run the workloads that judge answers against the
// corpus's set before those that publish events of their own: a sweep
// before count made count call the relay's correct counts wrong (its fresh
// events read as extra). Within each group the order given is kept.
func TestWorkloadsRunOrder(t *testing.T) {
	ws, err := workloadFlags{Workloads: []string{"sweep", "count", "negentropy", "burst", "clients", "mixed", "search"}}.build()
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
