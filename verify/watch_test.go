package verify

import (
	"testing"

	"github.com/relaybench/relaybench/nostr"
)

// TestWatchFaultsAsFound: a watcher is told of each faulty event of a
// stream as it is checked (with the relay's bytes) and of the faults of
// each judged answer; valid events tell nothing; after stop, nothing.
func TestWatchFaultsAsFound(t *testing.T) {
	var got []Found
	stop := WatchFaults(func(f Found) {
		f.Raw = append([]byte(nil), f.Raw...)
		got = append(got, f)
	})
	c := NewChecker()
	good := ev("a", "A", 1, 10)
	c.Trust([]byte(`{"id":"a"}`), good)
	c.Trust([]byte(`{"id":"b"}`), ev("b", "A", 7, 11))
	s := c.NewStream(&nostr.Filter{Kinds: []int{1}})
	for _, raw := range []string{`{"id":"a"}`, `{"id":"a"}`, `{"id":"b"}`, `{"id":"zz","sig":"bad"}`} {
		s.Event([]byte(raw), nil, nil)
	}
	m := NewModel([]*nostr.Event{good, ev("c", "A", 1, 12)})
	Judge([]Reply{{Filter: &nostr.Filter{Kinds: []int{1}}, Events: []*nostr.Event{good}}}, m, 0, false)
	stop()
	s.Event([]byte(`{"id":"b"}`), nil, nil) // not matching, no longer watched
	want := []struct{ kind, raw string }{{FoundDuplicated, `{"id":"a"}`}, {FoundNotMatching, `{"id":"b"}`}, {FoundInvalid, `{"id":"zz","sig":"bad"}`}, {FoundMissing, ""}}
	if len(got) != len(want) {
		t.Fatalf("told %d faults, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		if got[i].Kind != w.kind || string(got[i].Raw) != w.raw || got[i].N != 1 || got[i].Filter == nil {
			t.Errorf("fault %d: %s %q n=%d, want %s %q", i, got[i].Kind, got[i].Raw, got[i].N, w.kind, w.raw)
		}
	}
	if watching.Load() != nil {
		t.Errorf("the last stop left a watcher list: checks keep calling tell")
	}
}
