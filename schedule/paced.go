package schedule

import (
	"context"
	"math"
	"time"

	"github.com/relaybench/relaybench/internal/mono"
)

// The pieces of Run's dispatcher that a sender pacing its own connections
// uses: the intended times of a pattern and a sleep that never busy-waits.

// Times returns the intended mono times of the first n operations of p for
// a sender whose clock starts at start with its first operation: the
// Pacer's times, shifted so the first is at start (Run's first operation is
// one gap later), so p's spacing is kept and no error accumulates. Fewer
// than n when p has fewer operations.
func Times(p Pattern, start int64, n int) []int64 {
	pc := NewPacer(p)
	times := make([]int64, 0, n)
	var first time.Duration
	for len(times) < n {
		t, ok := pc.Next()
		if !ok {
			break
		}
		if len(times) == 0 {
			first = t
		}
		times = append(times, start+int64(t-first))
	}
	return times
}

// ConstantTimes returns the intended mono times of n operations at rate per
// second, the first at start: start + k/rate for k = 0…n-1, to the
// nanosecond (see Times). rate must be positive.
func ConstantTimes(start int64, rate float64, n int) []int64 {
	// The Pacer's k-th operation is at k/rate: n of them fit in n/rate.
	d := time.Duration(math.Ceil(float64(n)/rate*1e9)) + time.Nanosecond
	p, err := Constant(rate, d)
	if err != nil {
		panic("schedule: constant times: " + err.Error())
	}
	return Times(p, start, n)
}

// senderWait is SleepUntil's coarseWait. Several senders each sleeping on
// their own thread cost less CPU with the shorter nanosleep (a long one
// makes the runtime hand the thread's P to another thread more often),
// and are as punctual: on a 2-core machine, 4 senders at 1000/s in all
// took 6–8% of a core and were p50 30–40 µs late; 15–17% with 2 ms.
const senderWait = time.Millisecond

// SleepUntil sleeps until mono time t, or until ctx ends, without
// busy-waiting: a runtime timer until senderWait before t, then a
// nanosleep for the rest, as Run's dispatcher does. It reports whether t
// was reached.
func SleepUntil(ctx context.Context, t int64) bool {
	if mono.Now() >= t {
		return true
	}
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	return sleepTo(ctx.Done(), timer, t, senderWait, 0)
}

// sleepTo sleeps until mono time target; false if done closed first.
// Runtime timers overshoot by up to ~1 ms, so they are used only until
// wait before target, and nanosleep (at least minSleep) does the rest;
// wait < 0 sleeps on timers only.
func sleepTo(done <-chan struct{}, timer *time.Timer, target int64, wait, minSleep time.Duration) bool {
	coarse := wait < 0
	for {
		rem := target - mono.Now()
		if rem <= 0 {
			return true
		}
		if coarse || rem > int64(wait) {
			w := rem
			if !coarse {
				w -= int64(wait)
			}
			timer.Reset(time.Duration(w))
			select {
			case <-done:
				timer.Stop()
				return false
			case <-timer.C:
			}
			continue
		}
		nanosleep(max(rem, int64(minSleep)))
		select {
		case <-done:
			return false
		default:
		}
	}
}
