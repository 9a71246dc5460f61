package schedule

import (
	"context"
	"testing"
	"time"

	"github.com/relaybench/relaybench/internal/mono"
)

// The sender's times are the pacer's, the first at start and no error
// accumulated: start + k/rate to the nanosecond.
func TestConstantTimes(t *testing.T) {
	for _, rate := range []float64{1000, 3, 7.5, 1e6} {
		got := ConstantTimes(100, rate, 1000)
		if len(got) != 1000 {
			t.Fatalf("rate %v: %d times, want 1000", rate, len(got))
		}
		for k, at := range got {
			want := 100 + float64(k)*1e9/rate
			if d := float64(at) - want; d < -1 || d > 1 {
				t.Fatalf("rate %v: op %d at %d, want %.1f", rate, k, at, want)
			}
			if k > 0 && at < got[k-1] {
				t.Fatalf("rate %v: op %d at %d before op %d at %d", rate, k, at, k-1, got[k-1])
			}
		}
	}
	if got := ConstantTimes(5, 10, 0); len(got) != 0 {
		t.Fatalf("0 ops: got %v", got)
	}
}

// Times stops where the pattern ends.
func TestTimesStopsAtPatternEnd(t *testing.T) {
	p, err := Constant(10, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	got := Times(p, 0, 50)
	if len(got) != 10 || got[0] != 0 || got[9] != int64(900*time.Millisecond) {
		t.Fatalf("got %v, want the 10 ops of the pattern from 0 to 900ms", got)
	}
}

// SleepUntil returns at or after its time, and early (false) when the
// context ends.
func TestSleepUntil(t *testing.T) {
	ctx := context.Background()
	for _, d := range []time.Duration{0, 50 * time.Microsecond, 3 * time.Millisecond} {
		at := mono.Now() + int64(d)
		if !SleepUntil(ctx, at) {
			t.Fatalf("%v: not reached", d)
		}
		if now := mono.Now(); now < at {
			t.Fatalf("%v: returned %v early", d, time.Duration(at-now))
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	go cancel()
	if SleepUntil(cctx, mono.Now()+int64(time.Hour)) {
		t.Fatal("an hour's sleep was reached, not cut short by the context")
	}
}
