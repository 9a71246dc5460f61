package workload

import (
	"testing"
	"time"

	"github.com/relaybench/relaybench/internal/mono"
	"github.com/relaybench/relaybench/internal/testrelay"
	"github.com/relaybench/relaybench/judge"
	"github.com/relaybench/relaybench/metrics"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/wire"
)

// TestOpenLoopBehindNotRun: open-loop events due before the duration's
// end but still unsent when it passed are requested work that did not run
// (behindWhy: subscribe --rate --sub-duration), so the account adds up to
// the events due and the phase is never "all requested work ran"; an event
// due after the end is beyond the plan (not requested). The publisher came
// to them after the end with its in-flight window empty: the client sent
// late, so they are the client's limit (an error, exit 1), not work the
// relay prevented (exit 4). Without behindWhy every unsent event is cut
// (not requested). The duration (and its grace) has already ended before
// the first send, so nothing depends on timing (the grace is 1 ns or an
// hour here); within the grace the events due before the end are sent, late.
func TestOpenLoopBehindNotRun(t *testing.T) {
	r := testrelay.Start(t, testrelay.Config{})
	ctx := testCtx(t)
	fresh, err := NewFresh(ctx, testKeys(t), FreshSpec{Count: 4, Size: 10}, RunNonce())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		why                         func(bool) string
		grace                       int64 // after the duration's end, which is the first send's time
		requested, behind, accepted int64
	}{
		{SubscribeOptions{}.behindWhy, 1, 3, 3, 0}, // the grace over before the first send: not run
		{nil, 1, 0, 0, 0},
		{nil, int64(time.Hour), 0, 0, 0},
		{SubscribeOptions{}.behindWhy, int64(time.Hour), 3, 0, 3}, // within the grace: sent late
	} {
		cn, err := wire.Dial(ctx, r.URL(), wire.Options{})
		if err != nil {
			t.Fatal(err)
		}
		stop := mono.Now()
		plan := &livePlan{user: ctx, conns: []*wire.Conn{cn}, fresh: fresh, window: 4, timeout: 10 * time.Second,
			order:     [][]int{{0, 1, 2, 3}},
			intended:  [][]int64{{stop - 3, stop - 2, stop - 1, stop + 1}},
			stopAt:    stop,
			behindWhy: tc.why,
			series:    metrics.NewSeries(stop),
			grace:     tc.grace} // not the grace's own length: nothing depends on timing
		out := newLiveOut(4)
		runLive(ctx, plan, out)
		_ = cn.Close()
		a := out.led.Result()
		if !a.Balanced() || a.Requested != tc.requested || a.NotRun != tc.behind || a.NotRunBy[SubscribeOptions{}.behindWhy(false)] != tc.behind || a.Accepted != tc.accepted {
			t.Errorf("behind %d: account %+v, want %d requested, %d accepted, %d not run (%s)", tc.behind, a, tc.requested, tc.accepted, tc.behind, SubscribeOptions{}.behindWhy(false))
		}
		if cut := 4 - tc.accepted; out.cut.Load() != cut || out.behind.Load() != tc.behind {
			t.Errorf("behind %d: cut %d behind %d, want %d and %d", tc.behind, out.cut.Load(), out.behind.Load(), cut, tc.behind)
		}
		if tc.accepted > 0 {
			continue
		}
		ph := results.Phase{Name: "subscribe", Accounts: []results.Account{a}}
		_, inc, _ := judge.Phase(&ph)
		if len(inc) > 0 || (judge.ClientShort(&ph) != "") != (tc.behind > 0) {
			t.Errorf("behind %d: incomplete %q, client short %q: want the client's limit only", tc.behind, inc, judge.ClientShort(&ph))
		}
	}
}

// TestOpenLoopBehindRelayLimited: a publisher whose in-flight window is
// full of EVENTs the relay has not answered stops waiting for a slot when
// the duration ends; the events due before then are work the relay
// prevented (relay-limited: incomplete, exit 4), with the window's fill as
// evidence. The relay answers the first EVENT only after the duration has
// ended (OKDelay from its receipt, longer than the duration; a slot freed
// after the end is too late anyway), so the one-slot window is full from
// that send to the end; the publisher reaches its second event within half
// the duration (1.5 s) of the start: a stall that long is a hang, not a
// loaded machine.
func TestOpenLoopBehindRelayLimited(t *testing.T) {
	const d = 3 * time.Second
	r := testrelay.Start(t, testrelay.Config{OKDelay: d + time.Duration(liveGrace) + 250*time.Millisecond})
	ctx := testCtx(t)
	fresh, err := NewFresh(ctx, testKeys(t), FreshSpec{Count: 3, Size: 10}, RunNonce())
	if err != nil {
		t.Fatal(err)
	}
	cn, err := wire.Dial(ctx, r.URL(), wire.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer cn.Close()
	t0 := mono.Now()
	plan := &livePlan{user: ctx, conns: []*wire.Conn{cn}, fresh: fresh, window: 1, timeout: 10 * time.Second,
		order: [][]int{{0, 1, 2}}, intended: [][]int64{{t0, t0, t0}}, stopAt: t0 + int64(d), behindWhy: SubscribeOptions{}.behindWhy,
		series: metrics.NewSeries(t0)}
	out := newLiveOut(3)
	runLive(ctx, plan, out)
	a := out.led.Result()
	if !a.Balanced() || a.Requested != 3 || a.Accepted != 1 || a.NotRunBy[SubscribeOptions{}.behindWhy(true)] != 2 {
		t.Errorf("account %+v, want 1 accepted and 2 not run (%s)", a, SubscribeOptions{}.behindWhy(true))
	}
	if l := out.lags[0]; l.inFlight != 1 || l.fullWait < l.lag/2 {
		t.Errorf("evidence %+v: want the one slot in flight at the end, waited on for at least half the lag", l)
	}
	ph := results.Phase{Name: "subscribe", Accounts: []results.Account{a}}
	if _, inc, _ := judge.Phase(&ph); len(inc) == 0 || judge.ClientShort(&ph) != "" {
		t.Errorf("incomplete %q, client short %q: want the relay's doing only", inc, judge.ClientShort(&ph))
	}
}

// TestSenderLagJudge: who held a publisher back is judged from how long it
// waited on a full in-flight window of the time it was behind; catching up
// (an event attempted on time) forgets the waits before.
func TestSenderLagJudge(t *testing.T) {
	ms := int64(time.Millisecond)
	var l senderLag
	l.attempt(100*ms, 100*ms)    // on time
	l.waited(100*ms, 300*ms)     // a full window for 300 ms
	l.attempt(450*ms, 200*ms)    // late: behind since 100 ms
	l.cut(700*ms, 300*ms, 5, 64) // 600 ms behind, 300 ms of it on the window
	if !l.relayLimited() || l.lag != 600*ms || l.behind != 5 || l.inFlight != 64 {
		t.Errorf("window full half the lag: %+v, want relay-limited", l)
	}
	l = senderLag{}
	l.waited(100*ms, 300*ms)    // the relay held it back once …
	l.attempt(1000*ms, 1000*ms) // … it caught up …
	l.attempt(1500*ms, 1100*ms) // … then the client fell behind
	l.cut(1600*ms, 1200*ms, 3, 0)
	if l.relayLimited() || l.fullWait != 0 || l.lag != 500*ms {
		t.Errorf("caught up, then late with room in the window: %+v, want client-limited", l)
	}
	l = senderLag{}
	l.attempt(100*ms, 100*ms)
	l.blocked(100*ms, 400*ms) // a write the relay did not read for 400 ms
	l.attempt(500*ms, 105*ms)
	l.cut(800*ms, 110*ms, 2, 10)
	if !l.relayLimited() || l.writeWait != 400*ms || l.lag != 700*ms {
		t.Errorf("writes held up most of the lag: %+v, want relay-limited", l)
	}
	// The reasons name the flag of the command that ran.
	sweep := SubscribeOptions{flags: subFlags{duration: "--duration"}, Rate: 500}
	for _, c := range []struct{ got, want string }{
		{SubscribeOptions{Rate: 20000}.behindWhy(true), "relay-limited: not sent within 1s after --sub-duration ended (--rate 20,000/s): the in-flight window (--window) was full of EVENTs awaiting the relay's OK, or the relay did not read what was written"},
		{sweep.behindWhy(false), "client-limited: not sent within 1s after --duration ended (--rate 500/s): the client sent late with room in its in-flight window (its CPU or timer wake-ups, not the relay)"},
	} {
		if c.got != c.want {
			t.Errorf("reason %q, want %q", c.got, c.want)
		}
	}
}

// TestSendByGivesScheduledEventsGrace: an open-loop event scheduled before
// the duration's end may be sent up to liveGrace after it when unsent ones
// are booked as not run, so that a publisher a few milliseconds behind at
// the end sends its last events late instead of leaving them unrun; events
// scheduled after the end, closed-loop events and plans that do not book
// the unsent stop at the end.
func TestSendByGivesScheduledEventsGrace(t *testing.T) {
	const ms = int64(time.Millisecond)
	why := func(bool) string { return "x" }
	intended := []int64{100 * ms, 999 * ms, 1000 * ms, 1500 * ms}
	p := &livePlan{stopAt: 1000 * ms, behindWhy: why}
	for k, want := range []int64{1000*ms + liveGrace, 1000*ms + liveGrace, 1000 * ms, 1000 * ms} {
		if got := p.sendBy(intended, k); got != want {
			t.Errorf("event %d (intended %d ms): send by %d, want %d", k, intended[k]/ms, got, want)
		}
	}
	if got := p.sendBy(nil, 0); got != p.stopAt {
		t.Errorf("closed loop: send by %d, want the duration's end %d", got, p.stopAt)
	}
	if got := (&livePlan{stopAt: 1000 * ms}).sendBy(intended, 0); got != 1000*ms {
		t.Errorf("no behindWhy: send by %d, want the duration's end", got)
	}
	if got := (&livePlan{behindWhy: why}).sendBy(intended, 0); got != 0 {
		t.Errorf("no duration: send by %d, want 0 (no limit)", got)
	}
}
