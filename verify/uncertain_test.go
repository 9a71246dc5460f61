package verify

import (
	"slices"
	"testing"

	"github.com/relaybench/relaybench/nostr"
)

// Uncertain holds every unknown event and exactly the live accepted events
// an unknown one would supersede if stored: not an older unknown version,
// not another key (author, kind, d tag), not a regular event, not an
// accepted version already superseded.
func TestUncertain(t *testing.T) {
	d := func(v string) nostr.Tag { return nostr.Tag{"d", v} }
	acc := []*nostr.Event{
		ev("k1", "A", 0, 100),             // replaceable, threatened by k2
		ev("k0", "A", 0, 90),              // superseded by k1 (not live): not a threat
		ev("l1", "A", 10002, 100),         // replaceable, newer than the unknown l0: not threatened
		ev("p1", "A", 30023, 100, d("x")), // addressable d=x, threatened by p2
		ev("q1", "A", 30023, 100, d("y")), // d=y: p2 is another key
		ev("n1", "A", 1, 100),             // regular
		ev("m1", "B", 0, 100),             // another author's kind 0
	}
	unknown := []*nostr.Event{
		ev("k2", "A", 0, 200),
		ev("l0", "A", 10002, 50),
		ev("p2", "A", 30023, 200, d("x")),
		ev("n2", "A", 1, 300),
	}
	got := NewModelUnknown(acc, unknown).Uncertain()
	var ids []string
	for id := range got {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	want := []string{"k1", "k2", "l0", "n2", "p1", "p2"}
	if !slices.Equal(ids, want) {
		t.Errorf("uncertain %v, want %v", ids, want)
	}
	if u := NewModel(acc).Uncertain(); u != nil {
		t.Errorf("without unknown events: %v, want nil", u)
	}
	// An equal created_at: the lower id stays (NIP-01), so only a lower id
	// threatens.
	tie := NewModelUnknown([]*nostr.Event{ev("t5", "A", 0, 100)}, []*nostr.Event{ev("t1", "A", 0, 100), ev("t9", "A", 0, 100)}).Uncertain()
	if !tie["t5"] || len(tie) != 3 {
		t.Errorf("tie: %v", tie)
	}
	tie = NewModelUnknown([]*nostr.Event{ev("t5", "A", 0, 100)}, []*nostr.Event{ev("t9", "A", 0, 100)}).Uncertain()
	if tie["t5"] {
		t.Errorf("a higher id at the same created_at threatens: %v", tie)
	}
}
