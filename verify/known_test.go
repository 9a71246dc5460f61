package verify

import (
	"testing"

	"github.com/relaybench/relaybench/nostr"
)

// KnownPrefix recognises the published bytes, and a relay's other bytes of
// the event only once EventAt has checked them in full; never bytes that
// were refused, another event's bytes, or a message shorter than them.
func TestKnownPrefix(t *testing.T) {
	c := NewChecker()
	e0 := ev("e0", "A", 1, 10)
	pub := []byte(`{"id":"e0"}`)
	alt := []byte(`{"id": "e0"}`)
	bad := []byte(`{"id": "e0", "x": 1}`) // unchecked bytes claiming e0: Check refuses them
	s := c.NewIndexedStream(nil, 1)
	step := func(what string, p []byte, want int) {
		t.Helper()
		if got := c.KnownPrefix(p, e0, pub); got != want {
			t.Errorf("%s: %d, want %d", what, got, want)
		}
	}
	step("published, then the frame's end", append(append([]byte(nil), pub...), ']'), len(pub))
	step("published, cut short", pub[:len(pub)-1], 0)
	step("the relay's bytes before any check", alt, 0)
	if _, f := s.EventAt(bad, 0, e0, pub); f != Invalid {
		t.Fatalf("unchecked bytes: %v", f)
	}
	step("refused bytes", bad, 0)
	c.Trust(alt, ev("e0", "A", 1, 10)) // as if Check had verified them
	if _, f := s.EventAt(alt, 0, e0, pub); f != Valid {
		t.Fatalf("the relay's bytes: %v", f)
	}
	step("the relay's bytes once checked", append(append([]byte(nil), alt...), " ]"...), len(alt))
	step("another event's published bytes", []byte(`{"id":"e1"}`), 0)
	if got := c.KnownPrefix(alt, ev("e1", "A", 1, 10), []byte(`{"id":"e1"}`)); got != 0 {
		t.Errorf("e0's checked bytes for another event: %d", got)
	}
	var none *nostr.Event
	if got := c.KnownPrefix(pub, none, nil); got != 0 {
		t.Errorf("no event: %d", got)
	}
}
