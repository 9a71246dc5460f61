package merge

import (
	"testing"

	"github.com/relaybench/relaybench/results"
)

// TestMergeDeliveries: two subscribe segments, kind filters (every event
// matches every subscriber). Segment 0 got events 0, 2 accepted; segment 1
// got event 1 refused and event 3 accepted. Subscriber 0 (segment 0) missed
// event 3 (timed out) and received the refused event 1; subscriber 1
// (segment 1) never opened.
func TestMergeDeliveries(t *testing.T) {
	plan := results.LivePlan{Events: 4, Subscribers: 2, Channels: 2, Authors: 2, Overlap: 1, Filter: "kind"}
	seg := func(acc, ref []int, subs ...results.LiveSubscriber) *results.Phase {
		d := &results.LiveDeliveries{LivePlan: plan, Accepted: results.EncodeIndexSet(acc, 4), Subs: subs}
		if len(ref) > 0 {
			d.Refused = results.EncodeIndexSet(ref, 4)
		}
		return &results.Phase{Name: "subscribe", Deliveries: d, Counts: map[string]int64{},
			Accounts:     []results.Account{{Op: results.OpEvent, Requested: 2, Accepted: int64(len(acc)), Refused: int64(len(ref))}},
			Verification: &results.Verification{Verified: true}}
	}
	s0 := results.LiveSubscriber{Index: 0, MissAs: "timed out"}
	s0.SetMissing([]int{3}, 4)
	s1 := results.LiveSubscriber{Index: 1, MissAs: "not run", MissWhy: "subscription not open", None: true}
	out := &results.Phase{Name: "subscribe", Counts: map[string]int64{}, Verification: &results.Verification{Verified: true},
		Accounts: []results.Account{{Op: results.OpEvent, Requested: 4, Accepted: 3, Refused: 1}}}
	notes, err := mergeDeliveries(out, []*results.Phase{seg([]int{0, 2}, nil, s0), seg([]int{3}, []int{1}, s1)})
	if err != nil {
		t.Fatal(err)
	}
	a := out.Account(results.OpDelivery)
	want := results.Account{Op: results.OpDelivery, Requested: 6, Accepted: 2, TimedOut: 1, NotRun: 3, NotRunBy: map[string]int64{"subscription not open": 3}}
	if a == nil || a.Requested != want.Requested || a.Accepted != want.Accepted || a.TimedOut != want.TimedOut || a.NotRun != want.NotRun || a.NotRunBy["subscription not open"] != 3 {
		t.Fatalf("delivery account %+v, want %+v", a, want)
	}
	v := out.Verification
	if v.Expected != 3 || v.Missing != 1 || v.Extra != 1 || v.Passed {
		t.Errorf("verification %+v: want 3 expected (subscriber 0), 1 missing, 1 extra (the refused event delivered), failed", v)
	}
	if out.Counts["deliveries"] != 2 || out.Counts["missing"] != 1 || out.Rates["fanout"] != 2 {
		t.Errorf("counts %v rates %v", out.Counts, out.Rates)
	}
	if len(notes) != 2 {
		t.Errorf("notes %q: want the merge's note and the over-credited one", notes)
	}
	// A segment without a record cannot be merged with one that has it.
	if _, err := mergeDeliveries(out, []*results.Phase{seg([]int{0}, nil, s0), {Name: "subscribe"}}); err == nil {
		t.Error("a partial set of records was merged")
	}
}
