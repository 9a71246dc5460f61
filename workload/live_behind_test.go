package workload

import (
	"testing"
	"time"

	"github.com/relaybench/relaybench/internal/mono"
	"github.com/relaybench/relaybench/internal/testrelay"
	"github.com/relaybench/relaybench/judge"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/wire"
)

// TestOpenLoopBehindNotRun: open-loop events due before the duration's
// end but still unsent when it passed are requested work that did not run
// (behindWhy: subscribe --rate --sub-duration), so the account adds up to
// the events due and the phase is incomplete, never "all requested work
// ran"; an event due after the end is beyond the plan (not requested).
// Without behindWhy (mixed) every unsent event is cut, as before. The
// duration has already ended before the first send, so nothing depends on
// timing.
func TestOpenLoopBehindNotRun(t *testing.T) {
	r := testrelay.Start(t, testrelay.Config{})
	ctx := testCtx(t)
	fresh, err := NewFresh(ctx, testKeys(t), FreshSpec{Count: 4, Size: 10}, RunNonce())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		why               string
		requested, behind int64
	}{{whyBehind, 3, 3}, {"", 0, 0}} {
		cn, err := wire.Dial(ctx, r.URL(), wire.Options{})
		if err != nil {
			t.Fatal(err)
		}
		stop := mono.Now()
		plan := &livePlan{user: ctx, conns: []*wire.Conn{cn}, fresh: fresh, window: 4, timeout: 10 * time.Second,
			order:     [][]int{{0, 1, 2, 3}},
			intended:  [][]int64{{stop - 3, stop - 2, stop - 1, stop + int64(time.Hour)}},
			stopAt:    stop,
			behindWhy: tc.why}
		out := newLiveOut(4)
		runLive(ctx, plan, out)
		_ = cn.Close()
		a := out.led.Result()
		if !a.Balanced() || a.Requested != tc.requested || a.NotRun != tc.behind || a.NotRunBy[whyBehind] != tc.behind || a.Accepted != 0 {
			t.Errorf("behindWhy %q: account %+v, want %d requested, %d not run (%s)", tc.why, a, tc.requested, tc.behind, whyBehind)
		}
		if out.cut.Load() != 4 || out.behind.Load() != tc.behind {
			t.Errorf("behindWhy %q: cut %d behind %d, want 4 and %d", tc.why, out.cut.Load(), out.behind.Load(), tc.behind)
		}
		ph := results.Phase{Name: "subscribe", Accounts: []results.Account{a}}
		_, inc, _ := judge.Phase(&ph)
		if got := len(inc) > 0; got != (tc.behind > 0) {
			t.Errorf("behindWhy %q: incomplete %q, want incomplete %v", tc.why, inc, tc.behind > 0)
		}
	}
}
