package workload

import (
	"context"
	"testing"
	"time"
)

// TestLivePlanMatchesFilters: the plan relaybench merge counts deliveries
// with (results.LivePlan.Matches) agrees with every real subscriber filter
// on every fresh event, for each filter kind, overlap and segment.
func TestLivePlanMatchesFilters(t *testing.T) {
	c := testKeys(t)
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, f := range []string{FilterMix, FilterTag, FilterAuthor, FilterKind} {
		for _, ov := range []int{1, 2, 5} {
			for idx := range 3 {
				o := SubscribeOptions{Base: Base{Seed: 5}, Subscribers: 11, Channels: 4, Overlap: ov, Filter: f, Events: 37, Size: 10, Authors: 7,
					Rate: 100, StartAt: at, Segment: Segment{Index: idx, Count: 3}}
				if err := o.defaults(); err != nil {
					t.Fatal(err)
				}
				r, err := newSubRun(context.Background(), c, o)
				if err != nil {
					t.Fatal(err)
				}
				p := r.plan()
				if want := o.Segment.Split(11); len(r.subs) != want {
					t.Fatalf("segment %d has %d subscribers, want %d", idx, len(r.subs), want)
				}
				for _, s := range r.subs {
					if s.i%3 != idx {
						t.Fatalf("segment %d holds subscriber %d", idx, s.i)
					}
					for j, e := range r.fresh.Events {
						if got, want := p.Matches(s.i, j), s.filter.Matches(e); got != want {
							t.Fatalf("filter %s overlap %d: plan says subscriber %d matches event %d: %v, its filter %v", f, ov, s.i, j, got, want)
						}
					}
				}
			}
		}
	}
}

// TestSubscribeSegmentSameEvents: with a common StartAt every segment signs
// the same fresh events (ids), so their union is one test's.
func TestSubscribeSegmentSameEvents(t *testing.T) {
	c := testKeys(t)
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var ids []string
	for idx := range 2 {
		o := SubscribeOptions{Base: Base{Seed: 5}, Events: 9, Size: 10, Rate: 10, StartAt: at, Segment: Segment{Index: idx, Count: 2}}
		if err := o.defaults(); err != nil {
			t.Fatal(err)
		}
		r, err := newSubRun(context.Background(), c, o)
		if err != nil {
			t.Fatal(err)
		}
		for j, e := range r.fresh.Events {
			if idx == 0 {
				ids = append(ids, e.ID)
			} else if ids[j] != e.ID {
				t.Fatalf("segment 1 signed event %d as %s, segment 0 as %s", j, e.ID, ids[j])
			}
		}
	}
	o := SubscribeOptions{Rate: 0, StartAt: at, Segment: Segment{Index: 0, Count: 2}}
	if err := o.checkSegment(); err == nil {
		t.Fatal("a segment without --rate was accepted")
	}
}
