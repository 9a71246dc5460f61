package workload

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/relaybench/relaybench/internal/testrelay"
	"github.com/relaybench/relaybench/judge"
	"github.com/relaybench/relaybench/results"
)

// subHonest is the fan-out of the honesty tests: 4 subscribers on 2
// channels (tag filters, one channel each), 1 publisher, 60 events: every
// event is owed to exactly 2 subscribers, 120 deliveries in all.
var subHonest = SubscribeOptions{Base: Base{Timeout: 5 * time.Second}, Subscribers: 4, Publishers: 1, Channels: 2, Events: 60, Size: 100, Filter: FilterTag,
	Grace: 500 * time.Millisecond}

func runSubscribe(t *testing.T, cfg testrelay.Config, o SubscribeOptions) (results.Phase, *testrelay.Relay) {
	t.Helper()
	r := testrelay.New(cfg)
	t.Cleanup(r.Close)
	ph, err := Subscribe(testCtx(t), r.URL(), testKeys(t), o)
	if err != nil {
		t.Fatal(err)
	}
	return ph, r
}

type subSplit struct{ acc, ref, to, lost, notRun, canc int64 }

// subAccount returns the phase's account op, which must be balanced.
func subAccount(t *testing.T, ph results.Phase, op string) results.Account {
	t.Helper()
	a := ph.Account(op)
	if a == nil {
		t.Fatalf("no %s account in %+v", op, ph.Accounts)
	}
	if !a.Balanced() {
		t.Fatalf("unbalanced %s account %+v", op, *a)
	}
	return *a
}

func wantSplit(t *testing.T, ph results.Phase, op string, want subSplit) results.Account {
	t.Helper()
	a := subAccount(t, ph, op)
	if got := (subSplit{a.Accepted, a.Refused, a.TimedOut, a.ConnLost, a.NotRun, a.Cancelled}); got != want {
		t.Errorf("%s account %+v, want %+v", op, a, want)
	}
	return a
}

// checkCredited asserts that only accepted deliveries are credited: the
// deliveries counter, the deliver latency, the per-group counters and
// deliveries/s.
func checkCredited(t *testing.T, ph results.Phase) {
	t.Helper()
	d := subAccount(t, ph, results.OpDelivery)
	if ph.Counts["deliveries"] != d.Accepted {
		t.Errorf("deliveries counter %d, accepted deliveries %d", ph.Counts["deliveries"], d.Accepted)
	}
	if h := ph.Latency["deliver"]; h == nil || h.Count != d.Accepted {
		t.Errorf("deliver latency %+v for %d accepted deliveries", h, d.Accepted)
	}
	var groups int64
	for _, g := range ph.Groups {
		groups += g.Counts["deliveries"]
	}
	if groups != d.Accepted {
		t.Errorf("groups credit %d deliveries, account %d", groups, d.Accepted)
	}
	if secs := float64(ph.Duration) / 1e9; secs > 0 && d.Accepted > 0 {
		if got, want := ph.Rates["deliveries_per_sec"], float64(d.Accepted)/secs; got != want {
			t.Errorf("deliveries/s %.1f, want %.1f (accepted deliveries only)", got, want)
		}
	}
	if h := ph.Latency["ok"]; h == nil || h.Count != subAccount(t, ph, results.OpEvent).Accepted {
		t.Errorf("ok latency %+v", h)
	}
}

// verdict is the judge's reading of the phase: wrong answers, incomplete.
func verdict(ph results.Phase) (wrong, incomplete []string) {
	w, inc, _ := judge.Phase(&ph)
	return w, inc
}

func TestSubscribeHonestRelayBalanced(t *testing.T) {
	ph, _ := runSubscribe(t, testrelay.Config{Verify: true}, subHonest)
	wantSplit(t, ph, results.OpSub, subSplit{acc: 4})
	wantSplit(t, ph, results.OpEvent, subSplit{acc: 60})
	wantSplit(t, ph, results.OpDelivery, subSplit{acc: 120})
	checkCredited(t, ph)
	if v := ph.Verification; !v.Passed || v.Expected != 120 || v.Returned != 120 || v.Missing+v.Invalid+v.Duplicated+v.NotMatching+v.Extra != 0 {
		t.Errorf("verification %+v", v)
	}
	if w, inc := verdict(ph); len(w)+len(inc) > 0 || ph.Aborted != "" {
		t.Errorf("honest relay judged: wrong %v incomplete %v aborted %q", w, inc, ph.Aborted)
	}
	if ph.Params["events"] != 60 || ph.Params["size"] != 100 || ph.Params["authors"] == nil {
		t.Errorf("params %v", ph.Params)
	}
}

func TestSubscribeDroppedDeliveriesMissing(t *testing.T) {
	ph, r := runSubscribe(t, testrelay.Config{Verify: true, DropDeliveriesEvery: 5}, subHonest)
	if r.Stats().DeliveriesDropped != 24 {
		t.Fatalf("relay dropped %d", r.Stats().DeliveriesDropped)
	}
	d := wantSplit(t, ph, results.OpDelivery, subSplit{acc: 96, to: 24})
	checkCredited(t, ph)
	if v := ph.Verification; v.Passed || v.Missing != 24 || ph.Counts["missing"] != 24 {
		t.Errorf("verification %+v", v)
	}
	if !containsPrefix(ph.Notes, "24 owed deliveries never arrived") {
		t.Errorf("notes %v", ph.Notes)
	}
	if w, inc := verdict(ph); len(w) == 0 || len(inc) == 0 {
		t.Errorf("missing deliveries: wrong %v incomplete %v (account %+v)", w, inc, d)
	}
}

func TestSubscribeDuplicatesCountedNotCredited(t *testing.T) {
	// Every 9th delivery is sent twice: 13 of 120, none of the last event's
	// (a second copy arriving after every owed delivery is in may come after
	// the phase has ended).
	ph, r := runSubscribe(t, testrelay.Config{Verify: true, DuplicateDeliveriesEvery: 9}, subHonest)
	if r.Stats().DeliveriesDuplicated != 13 {
		t.Fatalf("relay duplicated %d", r.Stats().DeliveriesDuplicated)
	}
	wantSplit(t, ph, results.OpDelivery, subSplit{acc: 120})
	checkCredited(t, ph)
	if v := ph.Verification; v.Passed || v.Duplicated != 13 || v.Missing != 0 || v.Returned != 133 || ph.Counts["duplicated"] != 13 {
		t.Errorf("verification %+v", v)
	}
}

func TestSubscribeInvalidDeliveriesNotCredited(t *testing.T) {
	ph, r := runSubscribe(t, testrelay.Config{Verify: true, InvalidDeliveriesEvery: 5}, subHonest)
	if r.Stats().InvalidDeliveries != 24 {
		t.Fatalf("relay corrupted %d", r.Stats().InvalidDeliveries)
	}
	// The corrupted copy was the only one: the delivery is also missing.
	wantSplit(t, ph, results.OpDelivery, subSplit{acc: 96, to: 24})
	checkCredited(t, ph)
	if v := ph.Verification; v.Passed || v.Invalid != 24 || v.Missing != 24 || ph.Counts["invalid"] != 24 {
		t.Errorf("verification %+v", v)
	}
}

func TestSubscribeWrongFilterDeliveries(t *testing.T) {
	// Every 5th event (12 of 60) is also sent to the 2 subscribers whose
	// channel it is not on.
	ph, r := runSubscribe(t, testrelay.Config{Verify: true, WrongFilterDeliveriesEvery: 5}, subHonest)
	if r.Stats().WrongFilterDeliveries != 24 {
		t.Fatalf("relay misdelivered %d", r.Stats().WrongFilterDeliveries)
	}
	wantSplit(t, ph, results.OpDelivery, subSplit{acc: 120})
	checkCredited(t, ph)
	// The phase ends when every owed delivery has arrived: a stray copy of
	// one of the last events may still be on its way then (it is not part
	// of the phase). Those of the earlier events are long in.
	if v := ph.Verification; v.Passed || v.NotMatching < 12 || v.NotMatching > 24 || v.Missing != 0 || ph.Counts["not_matching"] != v.NotMatching {
		t.Errorf("verification %+v (not_matching count %d)", v, ph.Counts["not_matching"])
	}
}

func TestSubscribePublishersConnectionsClosed(t *testing.T) {
	// Every connection is cut at its 5th message: the publisher (one EVENT
	// at a time) after 4 accepted events; the subscribers (one REQ) live on.
	o := subHonest
	o.Publishers = 2
	ph, _ := runSubscribe(t, testrelay.Config{Verify: true, CloseAfter: 5}, o)
	wantSplit(t, ph, results.OpSub, subSplit{acc: 4})
	wantSplit(t, ph, results.OpEvent, subSplit{acc: 8, lost: 2, notRun: 50})
	wantSplit(t, ph, results.OpDelivery, subSplit{acc: 16})
	checkCredited(t, ph)
	if !ph.Verification.Passed {
		t.Errorf("verification %+v", ph.Verification)
	}
	for _, n := range ph.Notes {
		if strings.HasPrefix(n, "all ") {
			t.Errorf("note claims all events went out: %q", n)
		}
	}
	if w, inc := verdict(ph); len(w) > 0 || len(inc) == 0 {
		t.Errorf("wrong %v incomplete %v: want incomplete only", w, inc)
	}
}

func TestSubscribeRelayDiesDeliveriesLost(t *testing.T) {
	// The relay dies at the 11th EVENT: 10 accepted events, owed 20
	// deliveries, each received or lost with the subscribers' connections;
	// the phase does not wait out the grace period for them.
	o := subHonest
	o.Grace = 30 * time.Second
	start := time.Now()
	ph, _ := runSubscribe(t, testrelay.Config{Verify: true, KillAfterEvents: 11}, o)
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("waited %v for deliveries from a dead relay", d)
	}
	wantSplit(t, ph, results.OpEvent, subSplit{acc: 10, lost: 1, notRun: 49})
	d := subAccount(t, ph, results.OpDelivery)
	if d.Requested != 20 || d.Accepted+d.ConnLost != 20 {
		t.Errorf("deliveries %+v", d)
	}
	checkCredited(t, ph)
	if v := ph.Verification; !v.Passed || v.Missing != 0 {
		t.Errorf("a dead relay counted as wrong answers: %+v", v)
	}
}

func TestSubscribeNoEOSEEndsPromptly(t *testing.T) {
	o := subHonest
	o.Timeout = 300 * time.Millisecond
	ph, r := runSubscribe(t, testrelay.Config{Verify: true, NoEOSE: true}, o)
	wantSplit(t, ph, results.OpSub, subSplit{to: 4})
	wantSplit(t, ph, results.OpEvent, subSplit{notRun: 60})
	wantSplit(t, ph, results.OpDelivery, subSplit{})
	if r.Stats().Events != 0 {
		t.Errorf("published %d events with no subscription open", r.Stats().Events)
	}
	if ph.Aborted == "" || ph.Verification.Missing != 0 {
		t.Errorf("aborted %q verification %+v", ph.Aborted, ph.Verification)
	}
	if _, inc := verdict(ph); len(inc) == 0 {
		t.Error("not judged incomplete")
	}
}

func TestSubscribeRelayStallsAborts(t *testing.T) {
	// 4 REQs, then 10 EVENTs are handled; the relay then hangs: the
	// publisher stops after 3 EVENTs without an OK.
	o := subHonest
	o.Timeout = 300 * time.Millisecond
	ph, _ := runSubscribe(t, testrelay.Config{Verify: true, StallAfter: 14}, o)
	wantSplit(t, ph, results.OpEvent, subSplit{acc: 10, to: 3, notRun: 47})
	wantSplit(t, ph, results.OpDelivery, subSplit{acc: 20})
	if ph.Aborted == "" {
		t.Error("no Aborted line")
	}
	if v := ph.Verification; !v.Passed {
		t.Errorf("a stalled relay counted as wrong answers: %+v", v)
	}
}

func TestSubscribeSomeSubscriptionsRefused(t *testing.T) {
	// fanRelay answers CLOSED to subscriber 1's REQ and forwards every
	// event to the 2 others (kind filters: every event is owed to all 3).
	r := newFanRelay(t)
	r.refuse = map[string]string{"live-1": "restricted: not for you"}
	ph, err := Subscribe(testCtx(t), r.url(), testKeys(t), SubscribeOptions{Subscribers: 3, Publishers: 1, Filter: FilterKind, Events: 20, Size: 100, Grace: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	a := wantSplit(t, ph, results.OpSub, subSplit{acc: 2, ref: 1})
	if a.RefusedBy["restricted"] != 1 {
		t.Errorf("refusal class %v", a.RefusedBy)
	}
	wantSplit(t, ph, results.OpEvent, subSplit{acc: 20})
	d := wantSplit(t, ph, results.OpDelivery, subSplit{acc: 40, notRun: 20})
	if d.NotRunBy[whySubNotOpen] != 20 {
		t.Errorf("not run %v", d.NotRunBy)
	}
	checkCredited(t, ph)
	if v := ph.Verification; !v.Passed || v.Expected != 40 {
		t.Errorf("verification %+v", v)
	}
	if !containsPrefix(ph.Notes, "subscription refused: CLOSED: restricted: not for you (1×)") {
		t.Errorf("notes %v", ph.Notes)
	}
}

func TestSubscribeCancelledMidPublish(t *testing.T) {
	r := testrelay.New(testrelay.Config{Verify: true, OKDelay: 20 * time.Millisecond})
	defer r.Close()
	ctx, stamp := cancelAfterEvents(t, r, 5)
	o := subHonest
	o.Events, o.Grace, o.Timeout = 200, 30*time.Second, 30*time.Second
	ph, err := Subscribe(ctx, r.URL(), testKeys(t), o)
	returned := time.Now()
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
	if d := returned.Sub(<-stamp); d > 5*time.Second {
		t.Errorf("returned %v after the interrupt", d)
	}
	for _, op := range []string{results.OpSub, results.OpEvent, results.OpDelivery} {
		if a := subAccount(t, ph, op); a.TimedOut+a.ConnLost+a.NotRun > 0 {
			t.Errorf("interrupt blamed on the relay: %+v", a)
		}
	}
	if a := subAccount(t, ph, results.OpEvent); a.Cancelled == 0 || a.Accepted < 4 {
		t.Errorf("events %+v", a)
	}
	checkCredited(t, ph)
	if v := ph.Verification; !v.Passed || v.Missing != 0 {
		t.Errorf("interrupt failed verification: %+v", v)
	}
	if w, inc := verdict(ph); len(w)+len(inc) > 0 || ph.Aborted != "" {
		t.Errorf("interrupt judged against the relay: wrong %v incomplete %v aborted %q", w, inc, ph.Aborted)
	}
}
