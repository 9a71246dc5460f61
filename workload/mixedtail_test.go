package workload

import (
	"strings"
	"testing"
	"time"

	"github.com/relaybench/relaybench/results"
)

// TestSlowSecondNote: a publish-alone part whose OK p99 came from its
// first second (the preload's tail: 119 ms there, 3.64 ms after) is named,
// also when one later second is slow too (the median, not the highest);
// one whose seconds are alike, whose first second is slow but left the
// part's p99 under twice the later seconds' median, or that has no later
// second to compare with, is not. So is one whose p99 came from a later
// second (one stall: a walk's 2 s part, 40 of 2,000 events in a 30-50 ms
// stall, read "OK p99 0.0947× (faster together)"), but not when another
// second is as slow as the part's p99 (then it is no one second's). Short
// parts have FineStep points: a second's p99 is its points' highest.
func TestSlowSecondNote(t *testing.T) {
	ms := int64(time.Millisecond)
	sec := func(p99s ...int64) []results.Second {
		var out []results.Second
		for i, v := range p99s {
			out = append(out, results.Second{T: i, LatP99Ns: v})
		}
		return out
	}
	fine := []results.Second{{AtMs: 0, WidthMs: 100, LatP99Ns: 2 * ms}, {AtMs: 300, WidthMs: 100, LatP99Ns: 119 * ms},
		{AtMs: 1200, WidthMs: 100, T: 1, LatP99Ns: 3 * ms}, {AtMs: 2500, WidthMs: 100, T: 2, LatP99Ns: 3640 * 1000}}
	for _, c := range []struct {
		name   string
		series []results.Second
		okP99  int64
		want   string
	}{
		{"preload tail", sec(119*ms, 3*ms, 3640*1000), 119 * ms, "OK p99 119ms in the part's first second, 33× the median of its later seconds (3.64ms): the part's p99 119ms is that second's"},
		{"fine points", fine, 100 * ms, "OK p99 119ms in the part's first second, 33×"},
		{"a slow later second on a busy machine", sec(363*ms, 28*ms, 130*ms, 25*ms, 30*ms), 363 * ms, "OK p99 363ms in the part's first second, 12× the median of its later seconds (30.0ms)"},
		{"alike", sec(4*ms, 3*ms, 5*ms), 5 * ms, ""},
		{"first slow, not the part's p99", sec(20*ms, 6*ms, 5*ms), 5 * ms, ""},
		{"first slow, the part's p99 near a later second's", sec(1480*1000, 397*1000, 380*1000, 410*1000), 561 * 1000, ""},
		{"no later second", sec(119 * ms), 119 * ms, ""},
		{"later seconds without replies", sec(119*ms, 0), 119 * ms, ""},
		{"a stall in the second second of two (a walk's)", sec(380*1000, 48900*1000), 33400 * 1000, "OK p99 48.9ms in the part's second 2 (from 1 s to 2 s), 129× the median of its other seconds (380µs): the part's p99 33.4ms is that second's, one stall"},
		{"a stall mid-part", sec(400*1000, 500*1000, 40*ms, 450*1000, 420*1000), 30 * ms, "OK p99 40.0ms in the part's second 3 (from 2 s to 3 s), 89× the median of its other seconds (450µs)"},
		{"two slow seconds: the p99 is no one second's", sec(ms, 5*ms, ms, 6*ms, ms), 5 * ms, ""},
	} {
		got := slowSecondNote(c.series, c.okP99, false)
		if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("%s: %q\nwant %q", c.name, got, c.want)
		}
		first := strings.Contains(c.want, "first second")
		if first && !strings.Contains(got, "the preload's queue") || !first && strings.Contains(got, "preload") {
			t.Errorf("%s, relay not seen to settle: %q (a first second's names the preload's tail, a later one's not)", c.name, got)
		}
		// the relay's CPU settled before the part: the same note, without
		// naming the preload's tail as its likely cause
		settled := slowSecondNote(c.series, c.okP99, true)
		if c.want == "" && settled != "" || c.want != "" && (!strings.Contains(settled, c.want) || strings.Contains(settled, "preload's queue") || first != strings.Contains(settled, "though the relay's CPU had settled")) {
			t.Errorf("%s, relay settled: %q", c.name, settled)
		}
	}
}

// TestSettleRelay: the wait before mixed's first part ends at the first
// step the relay's CPU is under settleCores, says so and how long it
// waited; a relay that stays busy is waited for settleMax and the note
// says the alone part may measure the preload's tail; an unobserved relay
// gets no wait and no note. The figures are the sampler's (fake: whole
// seconds of CPU per 1 ms step, or none), so no timing decides the result.
func TestSettleRelay(t *testing.T) {
	fake := func(cpu ...float64) (Sampler, *int) {
		n := new(int)
		return func() func() *results.Resources {
			i := min(*n, len(cpu)-1)
			*n++
			return func() *results.Resources { return &results.Resources{RelayCPUSecs: cpu[i]} }
		}, n
	}
	begin, calls := fake(5, 5, 0)
	if got, ok := settleRelay(t.Context(), begin, time.Millisecond); !strings.HasPrefix(got, "settle: publish/alone began once the relay's CPU had settled after the preload (0.00 cores") || *calls != 3 || !ok {
		t.Errorf("settles at the third step: %d steps, %q, settled %v", *calls, got, ok)
	}
	begin, _ = fake(5)
	if got, ok := settleRelay(t.Context(), begin, time.Millisecond); !strings.Contains(got, "had not settled after the preload") || !strings.Contains(got, "may measure the preload's tail") || ok {
		t.Errorf("always busy: %q, settled %v", got, ok)
	}
	none := func() func() *results.Resources { return func() *results.Resources { return nil } }
	got1, ok1 := settleRelay(t.Context(), none, time.Millisecond)
	got2, ok2 := settleRelay(t.Context(), nil, time.Millisecond)
	if got1+got2 != "" || ok1 || ok2 {
		t.Errorf("unobserved relay: %q %q, settled %v %v", got1, got2, ok1, ok2)
	}
}
