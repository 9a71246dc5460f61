package verify

import (
	"testing"

	"github.com/relaybench/relaybench/nostr"
)

func ev(id, pub string, kind int, at int64, tags ...nostr.Tag) *nostr.Event {
	return &nostr.Event{ID: id, PubKey: pub, Kind: kind, CreatedAt: at, Tags: tags}
}

func TestModelReplaceable(t *testing.T) {
	m := NewModel([]*nostr.Event{
		ev("a1", "A", 0, 100), ev("a2", "A", 0, 200), // a2 replaces a1
		ev("b2", "B", 3, 300), ev("b1", "B", 3, 300), // tie: the lower id (b1) stays
		ev("c1", "C", 30023, 10, nostr.Tag{"d", "x"}), ev("c2", "C", 30023, 20, nostr.Tag{"d", "y"}), // different d: both stay
		ev("n1", "A", 1, 50), ev("n2", "A", 1, 60),
	})
	live := map[string]bool{}
	for _, e := range m.Live {
		live[e.ID] = true
	}
	for id, want := range map[string]bool{"a1": false, "a2": true, "b1": true, "b2": false, "c1": true, "c2": true, "n1": true, "n2": true} {
		if live[id] != want {
			t.Errorf("%s live=%v want %v", id, live[id], want)
		}
	}
	if acc, repl := m.Accepted("a1"); !acc || !repl {
		t.Errorf("a1 accepted=%v replaced=%v", acc, repl)
	}
	if m.Live[0].CreatedAt < m.Live[len(m.Live)-1].CreatedAt {
		t.Error("live set not newest first")
	}
}

func TestExpectedLimitAndCap(t *testing.T) {
	var evs []*nostr.Event
	for i := range 10 {
		evs = append(evs, ev(string(rune('a'+i)), "P", 1, int64(100+i)))
	}
	m := NewModel(evs)
	f := nostr.Filter{Kinds: []int{1}, Limit: 5}
	capped, all := m.Expected(&f, 3)
	if len(capped) != 3 || len(all) != 10 || capped[0].CreatedAt != 109 {
		t.Fatalf("capped %d all %d first %d", len(capped), len(all), capped[0].CreatedAt)
	}
}

// A relay may pick any of the events tied at the cut-off timestamp.
func TestVerifyToleratesTiesAtCutoff(t *testing.T) {
	evs := []*nostr.Event{ev("x1", "P", 1, 300), ev("x2", "P", 1, 200), ev("x3", "P", 1, 200), ev("x4", "P", 1, 100)}
	m := NewModel(evs)
	f := nostr.Filter{Kinds: []int{1}, Limit: 2}
	// Expected is x1 plus one of x2/x3; the relay returned x3.
	v := Answer(&f, []*nostr.Event{evs[0], evs[2]}, 0, m, 0)
	if v.Missing != 0 || v.Extra != 0 {
		t.Fatalf("tie not tolerated: %+v", v)
	}
	// Returning the older x4 instead is wrong: one missing, one extra.
	v = Answer(&f, []*nostr.Event{evs[0], evs[3]}, 0, m, 0)
	if v.Missing != 1 || v.Extra != 1 {
		t.Fatalf("older event not flagged: %+v", v)
	}
	// Duplicates and events outside the filter are counted.
	f2 := nostr.Filter{Kinds: []int{1}}
	v = Answer(&f2, []*nostr.Event{evs[0], evs[0], ev("k7", "P", 7, 300)}, 1, m, 0)
	if v.Duplicated != 1 || v.NotMatching != 1 || v.Invalid != 1 || v.Missing != 3 {
		t.Fatalf("counts %+v", v)
	}
}

func TestInferCap(t *testing.T) {
	var evs []*nostr.Event
	for i := range 30 {
		evs = append(evs, ev(string(rune('A'+i)), "P", 1, int64(i)))
	}
	m := NewModel(evs)
	mk := func(n int) (*nostr.Filter, []*nostr.Event) {
		return &nostr.Filter{Kinds: []int{1}, Limit: 25}, m.Live[:n]
	}
	r1, p1 := mk(10)
	r2, p2 := mk(10)
	if c := InferCap([]*nostr.Filter{r1, r2}, [][]*nostr.Event{p1, p2}, m); c != 10 {
		t.Fatalf("cap %d, want 10", c)
	}
	r3, p3 := mk(7)
	if c := InferCap([]*nostr.Filter{r1, r2, r3}, [][]*nostr.Event{p1, p2, p3}, m); c != 0 {
		t.Fatalf("inconsistent short answers must not infer a cap, got %d", c)
	}
}
