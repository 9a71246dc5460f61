package verify

import (
	"testing"

	"github.com/relaybench/relaybench/nostr"
)

// Warm only reads: any index (before, inside or past the stream's known
// list) leaves the stream as it was, so the event it named is still
// judged valid once and a duplicate after; with every filter field set or
// none, and on a stream without a known list.
func TestStreamWarmChangesNothing(t *testing.T) {
	c := NewChecker()
	known := []*nostr.Event{ev("e0", "A", 1, 10), ev("e1", "A", 1, 11)}
	pub := [][]byte{[]byte(`{"id":"e0"}`), []byte(`{"id":"e1"}`)}
	since, until := int64(1), int64(100)
	full := &nostr.Filter{IDs: []string{"e0", "e1"}, Authors: []string{"A"}, Kinds: []int{1}, Since: &since, Until: &until}
	for _, s := range []*Stream{c.NewIndexedStream(full, len(known)), c.NewIndexedStream(&nostr.Filter{}, len(known)),
		c.NewIndexedStream(nil, len(known)), c.NewStream(full)} {
		for _, k := range []int{-1, 0, 1, 2, 63, 64, 1 << 30} {
			s.Warm(k)
		}
		for k := range known {
			for _, want := range []Fault{Valid, Duplicate} {
				if _, got := s.EventAt(pub[k], k, known[k], pub[k]); got != want {
					t.Errorf("event %d after Warm: %v, want %v", k, got, want)
				}
			}
		}
	}
}
