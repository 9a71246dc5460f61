package verify

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/relaybench/relaybench/nostr"
)

// ExpectedCount gives ExpectedAs's capped list and the length of its full
// one, for every filter, cap and reading.
func TestExpectedCountSameAsExpectedAs(t *testing.T) {
	var evs []*nostr.Event
	for i := range 300 {
		e := &nostr.Event{ID: fmt.Sprintf("%064x", i), PubKey: fmt.Sprintf("%064x", i%7), CreatedAt: int64(1000 + i%50), Kind: []int{1, 0, 30023, 10002}[i%4]}
		if e.Kind == 30023 {
			e.Tags = []nostr.Tag{{"d", fmt.Sprint(i % 3)}}
		}
		evs = append(evs, e)
	}
	m := NewModel(evs)
	filters := []nostr.Filter{{}, {Limit: 10}, {Kinds: []int{1}}, {Kinds: []int{0}, Limit: 3}, {IDs: []string{evs[1].ID, evs[5].ID, evs[9].ID}, Limit: 2},
		{IDs: []string{evs[1].ID, evs[5].ID}}, {Authors: []string{evs[3].PubKey}, Limit: 500}, {Kinds: []int{7}}}
	for i := range filters {
		for _, relayCap := range []int{0, 1, 5, 1000} {
			for _, r := range []Reading{LatestOnly, KeepsSuperseded} {
				wantCapped, wantAll := m.ExpectedAs(&filters[i], relayCap, r)
				capped, total := m.ExpectedCount(&filters[i], relayCap, r)
				if !reflect.DeepEqual(capped, wantCapped) && (len(capped) != 0 || len(wantCapped) != 0) || total != len(wantAll) {
					t.Fatalf("filter %d cap %d %v: %d of %d, want %d of %d", i, relayCap, r, len(capped), total, len(wantCapped), len(wantAll))
				}
			}
		}
	}
}
