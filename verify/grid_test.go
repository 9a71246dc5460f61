package verify

import (
	"testing"

	"github.com/relaybench/relaybench/nostr"
)

// Streams on one grid judge as indexed streams do, each on its own: a
// copy is a duplicate only in the column that saw it; the filter is
// judged per stream (streams with equal filters share a row, others
// don't), and an event that is not the known one its bytes seemed to name
// is judged by Event.
func TestGridStreams(t *testing.T) {
	c := NewChecker()
	known := []*nostr.Event{ev("e0", "A", 1, 10), ev("e1", "B", 7, 11), ev("e2", "A", 7, 12)}
	pub := [][]byte{[]byte(`{"id":"e0"}`), []byte(`{"id":"e1"}`), []byte(`{"id":"e2"}`)}
	other := []byte(`{"id":"y"}`)
	c.Trust(other, ev("y", "A", 1, 13)) // valid, but not e1
	kind1, kind1b, kind7 := &nostr.Filter{Kinds: []int{1}}, &nostr.Filter{Kinds: []int{1}}, &nostr.Filter{Kinds: []int{7}}
	g := c.NewGrid(known, 4)
	ss := []Stream{g.Stream(c, kind1, 0), g.Stream(c, kind1b, 1), g.Stream(c, kind7, 2), g.Stream(c, nil, 3)}
	if len(g.match) != 2 {
		t.Errorf("%d match rows for two distinct filters", len(g.match))
	}
	for i, step := range []struct {
		col, k int
		raw    []byte
		want   Fault
	}{
		{0, 0, pub[0], Valid},
		{1, 0, pub[0], Valid}, // another column: not a duplicate
		{0, 0, pub[0], Duplicate},
		{2, 0, pub[0], NotMatching},
		{2, 1, pub[1], Valid},
		{0, 1, pub[1], NotMatching},
		{3, 1, pub[1], Valid}, // no filter
		{3, 1, pub[1], Duplicate},
		{1, 2, pub[2], NotMatching},
		{2, 2, pub[2], Valid},
		{1, 1, other, Valid}, // not e1 (kind 7): event y, kind 1, judged by Event
		{1, 1, other, Duplicate},
		{1, 2, []byte(`{"id":"e2","sig":"bad"}`), Invalid},
	} {
		if _, got := ss[step.col].EventAt(step.raw, step.k, known[step.k], pub[step.k]); got != step.want {
			t.Errorf("step %d (column %d, %s): %v, want %v", i, step.col, step.raw, got, step.want)
		}
	}
	for k := range known { // Warm only reads
		for i := range ss {
			ss[i].Warm(k)
		}
	}
	if _, got := ss[0].EventAt(pub[2], 2, known[2], pub[2]); got != NotMatching {
		t.Errorf("after Warm: %v", got)
	}
}

// Filters share a match row only when they match alike: two tag values
// that JSON writes the same (invalid UTF-8 bytes both become U+FFFD) are
// two rows, and each stream is judged by its own filter. A known event in
// other bytes (re-serialized by the relay and checked) is judged as in its
// published bytes; an index past the known list is judged by Event.
func TestGridFiltersExact(t *testing.T) {
	c := NewChecker()
	e := ev("e0", "A", 1, 10)
	e.Tags = []nostr.Tag{{"t", "\xfe"}}
	known := []*nostr.Event{e}
	pub, alt := []byte(`{"id":"e0"}`), []byte(`{"id": "e0"}`)
	c.Trust(alt, e)
	fe := &nostr.Filter{Tags: map[string][]string{"t": {"\xfe"}}}
	ff := &nostr.Filter{Tags: map[string][]string{"t": {"\xff"}}}
	g := c.NewGrid(known, 2)
	a, b := g.Stream(c, fe, 0), g.Stream(c, ff, 1)
	if len(g.match) != 2 {
		t.Fatalf("%d match rows for filters that match differently", len(g.match))
	}
	if _, f := b.EventAt(pub, 0, e, pub); f != NotMatching {
		t.Errorf("tag \\xff, event tagged \\xfe: %v", f)
	}
	if _, f := a.EventAt(alt, 0, e, pub); f != Valid {
		t.Errorf("re-serialized bytes of a matching event: %v", f)
	}
	if _, f := a.EventAt(pub, 0, e, pub); f != Duplicate {
		t.Errorf("its published bytes after the re-serialized ones: %v", f)
	}
	if _, f := b.EventAt(pub, 1, e, pub); f != NotMatching { // past the list: Event, by id
		t.Errorf("an index past the known list: %v", f)
	}
	if filterKey(fe) == filterKey(ff) || filterKey(fe) != filterKey(&nostr.Filter{Tags: map[string][]string{"t": {"\xfe"}}}) {
		t.Error("filterKey is not exact")
	}
}
