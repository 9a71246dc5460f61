package verify

import (
	"testing"

	"github.com/relaybench/relaybench/nostr"
)

// An indexed stream books known events by index: a second copy is a
// duplicate whether it comes in the published bytes or in other valid
// bytes; invalid bytes, events outside the filter and foreign events are
// judged as by Event.
func TestIndexedStream(t *testing.T) {
	c := NewChecker()
	known := []*nostr.Event{ev("e0", "A", 1, 10), ev("e1", "A", 1, 11), ev("e2", "A", 7, 12)}
	pub := [][]byte{[]byte(`{"id":"e0"}`), []byte(`{"id":"e1"}`), []byte(`{"id":"e2"}`)}
	alt0, alt1 := []byte(`{"id": "e0"}`), []byte(`{"id": "e1"}`)
	c.Trust(alt0, ev("e0", "A", 1, 10)) // valid, re-serialized by the relay
	c.Trust(alt1, ev("e1", "A", 1, 11))
	foreign := []byte(`{"id":"x"}`)
	c.Trust(foreign, ev("x", "B", 1, 13))
	s := c.NewIndexedStream(&nostr.Filter{Kinds: []int{1}}, len(known))
	for i, step := range []struct {
		raw  []byte
		k    int
		want Fault
	}{
		{pub[0], 0, Valid},
		{pub[0], 0, Duplicate},
		{alt0, 0, Duplicate},
		{alt1, 1, Valid},
		{pub[1], 1, Duplicate},
		{[]byte(`{"id":"e2","sig":"bad"}`), 2, Invalid},
		{pub[2], 2, NotMatching},
		{foreign, -1, Valid},
		{foreign, -1, Duplicate},
	} {
		var kn *nostr.Event
		var pb []byte
		if step.k >= 0 {
			kn, pb = known[step.k], pub[step.k]
		}
		if _, got := s.EventAt(step.raw, step.k, kn, pb); got != step.want {
			t.Errorf("step %d (%s): %v, want %v", i, step.raw, got, step.want)
		}
	}
	// Another subscriber gets the re-serialized bytes (now compared with the
	// ones checked before, not looked up), then other bytes claiming e0.
	s2 := c.NewIndexedStream(nil, len(known))
	if e, got := s2.EventAt(alt0, 0, known[0], pub[0]); got != Valid || e != known[0] {
		t.Errorf("re-serialized bytes on a second stream: %v %v", e, got)
	}
	if _, got := s2.EventAt([]byte(`{"id": "e0", "x": 1}`), 0, known[0], pub[0]); got != Invalid {
		t.Errorf("other unchecked bytes claiming e0: %v", got)
	}
}
