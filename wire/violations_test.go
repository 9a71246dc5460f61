package wire

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/relaybench/relaybench/internal/mono"
	"github.com/relaybench/relaybench/nostr"
)

func ctx10s(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// An OK for an event whose wait ended (cancelled, expired) is late; an OK
// for an id never sent, or a second OK for an answered one, is foreign.
// The relay answers nothing but event B (twice) until a REQ, which it
// answers with the OKs of A and C (late), one for an id never sent
// (foreign), and EOSE: once the Query returns, every OK before has been read.
func TestLateOKsAreNotForeign(t *testing.T) {
	idA, rawA := fakeEvent(1, "a")
	idB, rawB := fakeEvent(2, "b")
	idC, rawC := fakeEvent(3, "c")
	never := strings.Repeat("e", 64)
	r := newTestRelay(t, nil, func(tc *tconn, msg []byte) {
		arr := decode(t, msg)
		switch label(arr) {
		case "EVENT":
			if id := eventID(t, arr[1]); id == idB {
				tc.send(`["OK","` + id + `",true,""]`)
				tc.send(`["OK","` + id + `",true,"again"]`)
			}
		case "REQ":
			tc.send(`["OK","` + idA + `",true,""]`)
			tc.send(`["OK","` + idC + `",false,"error: slow"]`)
			tc.send(`["OK","` + never + `",true,""]`)
			tc.send(`["EOSE",` + string(arr[1]) + `]`)
		}
	})
	c := dialT(t, r.url, Options{})
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	if ok, err := c.Publish(gone, idA, rawA); !errors.Is(err, ErrTimeout) || ok.Err != ErrTimeout {
		t.Fatalf("publish with a cancelled context: %+v, %v", ok, err)
	}
	if ok, err := c.Publish(ctx10s(t), idB, rawB); err != nil || !ok.Accepted {
		t.Fatalf("publish B: %+v, %v", ok, err)
	}
	expired := make(chan OK, 1)
	if err := c.SendEvent(idC, rawC, func(ok OK) { expired <- ok }); err != nil {
		t.Fatal(err)
	}
	if n := c.ExpireBefore(mono.Now() + 1); n != 1 {
		t.Fatalf("expired %d, want 1", n)
	}
	if ok := within(t, expired, "C's expiry"); ok.Err != ErrTimeout {
		t.Fatalf("C: %+v", ok)
	}
	if res, err := c.Query(ctx10s(t), "s", []nostr.Filter{{Limit: 1}}); err != nil || res.Ended != EndEOSE {
		t.Fatalf("query: %+v, %v", res, err)
	}
	st := c.Stats()
	if st.LateOK != 2 || st.ForeignOK != 2 || st.UnmatchedOK != 4 || st.OKs != 5 {
		t.Fatalf("late %d (want 2: A cancelled, C expired), foreign %d (want 2: B's second OK, one never sent), unmatched %d, OKs %d",
			st.LateOK, st.ForeignOK, st.UnmatchedOK, st.OKs)
	}
}

// An EVENT under a subscription id never opened on the connection is
// unsolicited; one under an id the client closed is after CLOSE (a race
// NIP-01 allows). The relay answers CLOSE s1 with one of each; the REQ for
// s2 that follows is answered with EOSE after them.
func TestUnsolicitedEventsApartFromEventsAfterClose(t *testing.T) {
	_, ev := fakeEvent(1, "x")
	r := newTestRelay(t, nil, func(tc *tconn, msg []byte) {
		arr := decode(t, msg)
		switch label(arr) {
		case "REQ":
			tc.send(`["EVENT",` + string(arr[1]) + `,` + string(ev) + `]`)
			tc.send(`["EOSE",` + string(arr[1]) + `]`)
		case "CLOSE":
			if string(arr[1]) != `"s1"` {
				return // s2's CLOSE comes after the counts are read
			}
			tc.send(`["EVENT",` + string(arr[1]) + `,` + string(ev) + `]`)
			tc.send(`["EVENT","never-opened",` + string(ev) + `]`)
			tc.send(`["EVENT","s\u0031",` + string(ev) + `]`) // s1, escaped
		}
	})
	c := dialT(t, r.url, Options{})
	for _, id := range []string{"s1", "s2"} {
		if res, err := c.Query(ctx10s(t), id, []nostr.Filter{{Limit: 5}}); err != nil || len(res.Events) != 1 {
			t.Fatalf("query %s: %+v, %v", id, res, err)
		}
	}
	st := c.Stats()
	if st.EventsAfterClose != 2 || st.UnsolicitedEvents != 1 || st.UnknownSubEvents != 3 {
		t.Fatalf("after close %d (want 2), unsolicited %d (want 1), unknown %d (want 3)", st.EventsAfterClose, st.UnsolicitedEvents, st.UnknownSubEvents)
	}
}

// A relay that streams events into a REQ without end (ignoring limit) is
// cut at the cap: the Query ends over-cap with nothing kept, the
// subscription is closed, and the connection goes on working.
func TestQueryAnswerOverCap(t *testing.T) {
	_, ev := fakeEvent(1, strings.Repeat("x", 1000))
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	r := newTestRelay(t, nil, func(tc *tconn, msg []byte) {
		arr := decode(t, msg)
		if label(arr) != "REQ" {
			return
		}
		if string(arr[1]) == `"after"` {
			tc.send(`["EOSE","after"]`)
			return
		}
		go func() { // until the connection ends
			for {
				select {
				case <-stop:
					return
				default:
				}
				if tc.send(`["EVENT",`+string(arr[1])+`,`+string(ev)+`]`) != nil {
					return
				}
			}
		}()
	})
	for _, tc := range []struct {
		name  string
		o     Options
		limit int
		want  int   // events received when cut
		held  int64 // AnswersHeldMax for the case (0: unchanged)
	}{
		{"derived", Options{}, 10, 2*MinAnswerEvents + 100 + 1, 0},
		{"events flag", Options{MaxAnswerEvents: 7}, 10, 8, 0},
		{"bytes flag", Options{MaxAnswerBytes: int64(3*len(ev) + 10)}, 10, 4, 0},
		{"shared budget", Options{}, 10, 6, int64(5*len(ev) + 10)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.held > 0 {
				defer func(was int64) { AnswersHeldMax = was }(AnswersHeldMax)
				AnswersHeldMax = tc.held
			}
			c := dialT(t, r.url, tc.o)
			res, err := c.Query(ctx10s(t), "flood", []nostr.Filter{{Limit: tc.limit}})
			var oc *OverCapError
			if !errors.Is(err, ErrAnswerOverCap) || !errors.As(err, &oc) || res.Ended != EndOverCap || res.Events != nil {
				t.Fatalf("got %v (ended %q, %d events kept), want an over-cap end with nothing kept", err, res.Ended, len(res.Events))
			}
			if res.Received != tc.want || oc.Received != tc.want {
				t.Errorf("cut after %d events, want %d", res.Received, tc.want)
			}
			if (oc.Shared > 0) != (tc.held > 0) || answersHeld.Load() != 0 {
				t.Errorf("shared budget %d (want it named: %v), %d bytes still counted held", oc.Shared, tc.held > 0, answersHeld.Load())
			}
			if st := c.Stats(); st.AnswersOverCap != 1 {
				t.Errorf("AnswersOverCap %d, want 1", st.AnswersOverCap)
			}
			if res2, err := c.Query(ctx10s(t), "after", []nostr.Filter{{Limit: 1}}); err != nil || res2.Ended != EndEOSE {
				t.Fatalf("next query on the same connection: %+v, %v", res2, err)
			}
		})
	}
	closes := 0
	for _, m := range r.received() {
		if m == `["CLOSE","flood"]` {
			closes++
		}
	}
	if closes != 4 {
		t.Errorf("relay got %d CLOSEs of the flooded subscription, want 4", closes)
	}
}

func TestAnswerCapDerivation(t *testing.T) {
	for _, tc := range []struct {
		o       Options
		filters []nostr.Filter
		events  int
		bytes   int64
	}{
		{Options{}, []nostr.Filter{{Limit: 100}}, 10100, MinAnswerBytes},
		{Options{}, []nostr.Filter{{Limit: 10}, {IDs: []string{"a", "b"}}}, 10100, MinAnswerBytes},
		{Options{}, []nostr.Filter{{Limit: 4000}, {Limit: 3000}}, 14100, 14100 * DefaultAnswerEventBytes},
		{Options{}, []nostr.Filter{{Kinds: []int{1}}}, 2*UnlimitedFilterEvents + 100, (2*UnlimitedFilterEvents + 100) * DefaultAnswerEventBytes},
		{Options{MaxAnswerEvents: 5, MaxAnswerBytes: 99}, []nostr.Filter{{Limit: 100}}, 5, 99},
	} {
		e, b := tc.o.AnswerCap(tc.filters)
		if e != tc.events || b != tc.bytes {
			t.Errorf("AnswerCap(%+v, %+v) = %d, %d; want %d, %d", tc.o, tc.filters, e, b, tc.events, tc.bytes)
		}
	}
	if e, b := (Options{}).AnswerCap([]nostr.Filter{{Limit: 1 << 62}, {Limit: 1 << 62}}); e < 1<<30 || b < 1<<30 {
		t.Errorf("absurd limits overflow the cap: %d events, %d bytes", e, b)
	}
}

// The recall never forgets (no false negatives) past its exact part, and
// rarely takes an unseen id for a seen one.
func TestRecallBounded(t *testing.T) {
	r := newRecall(16, 1<<14)
	id := func(i int) string { return fmt.Sprintf("%064x", i) }
	for i := range 1000 {
		r.add(id(i))
	}
	if len(r.exact) > 16 || !r.approximate() {
		t.Fatalf("exact part holds %d (max 16), approximate %v", len(r.exact), r.approximate())
	}
	for i := range 1000 {
		if !r.has([]byte(id(i))) {
			t.Fatalf("forgot %s", id(i))
		}
	}
	false_ := 0
	for i := 1000; i < 11000; i++ {
		if r.has([]byte(id(i))) {
			false_++
		}
	}
	if false_ > 100 { // ~0.2% expected at 1,000 entries in 16 Kbit, 4 probes
		t.Errorf("%d of 10,000 unseen ids taken for seen ones", false_)
	}
	e := newRecall(16, 1<<14)
	e.add(id(1))
	if !e.take([]byte(id(1))) || e.take([]byte(id(1))) {
		t.Error("an exact entry is not forgotten once taken")
	}
}

// When the writer finds the socket closed before the reader has handled
// the frames already received (an OK for an event in flight, an EVENT of an
// open subscription), those frames answer what the loss ended: a late OK
// and an event after the subscription's end, never a foreign OK nor an
// unsolicited EVENT.
func TestFramesAfterALossAreNotViolations(t *testing.T) {
	id, raw := fakeEvent(1, "a")
	_, ev := fakeEvent(2, "b")
	r := newTestRelay(t, nil, func(*tconn, []byte) {}) // answers nothing
	c := dialT(t, r.url, Options{})
	ended := make(chan OK, 1)
	if err := c.SendEvent(id, raw, func(ok OK) { ended <- ok }); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Req("s1", []nostr.Filter{{Limit: 1}}, SubHandler{}); err != nil {
		t.Fatal(err)
	}
	c.fail(errors.New("write: broken pipe"))
	if ok := <-ended; !errors.Is(ok.Err, ErrClosed) {
		t.Fatalf("event in flight ended with %v, want ErrClosed", ok.Err)
	}
	for _, msg := range []string{`["OK","` + id + `",true,""]`, `["EVENT","s1",` + string(ev) + `]`} {
		var f frame
		if err := parseFrame([]byte(msg), &f); err != nil {
			t.Fatal(err)
		}
		c.dispatch(&f, mono.Now(), map[string]string{})
	}
	st := c.Stats()
	if st.ForeignOK != 0 || st.LateOK != 1 || st.UnsolicitedEvents != 0 || st.EventsAfterClose != 1 {
		t.Fatalf("foreign %d late %d unsolicited %d after close %d, want 0 1 0 1", st.ForeignOK, st.LateOK, st.UnsolicitedEvents, st.EventsAfterClose)
	}
}
