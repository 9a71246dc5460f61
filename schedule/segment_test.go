package schedule

import (
	"context"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// TestOwnsSplitsThePatternExactly: N runs, each keeping the operations k
// with k mod N = I (an execution segment), send together exactly the
// single run's operations: every position once, each at its intended time
// since the run's start.
func TestOwnsSplitsThePatternExactly(t *testing.T) {
	p := must(Poisson(must(Ramp(100, 900, 2*time.Second)), 5))
	want := slices.Collect(IntendedTimes(p))
	for _, n := range []int64{1, 3, 4} {
		got := make(map[int64]time.Duration)
		for i := range n {
			synctest.Test(t, func(t *testing.T) {
				var mu sync.Mutex
				owns := func(seq int64) bool { return seq%n == i }
				r, err := RunSlots(t.Context(), fake(Config{Pattern: p, Pool: 4, Owns: owns}), func(_ context.Context, s Slot, _ int) Outcome {
					mu.Lock()
					defer mu.Unlock()
					if s.Seq%n != i {
						t.Errorf("segment %d/%d ran operation %d", i, n, s.Seq)
					}
					if _, dup := got[s.Seq]; dup {
						t.Errorf("operation %d run twice", s.Seq)
					}
					got[s.Seq] = time.Duration(s.Intended)
					return Outcome{Accepted: true}
				})
				if err != nil {
					t.Fatal(err)
				}
				checkBalance(t, r)
				if share := (int64(len(want)) + n - 1 - i) / n; r.Intended != share {
					t.Errorf("segment %d/%d intended %d, its share is %d", i, n, r.Intended, share)
				}
				mu.Lock()
				for seq, at := range got {
					if seq%n == i {
						got[seq] = at - time.Duration(r.Start)
					}
				}
				mu.Unlock()
			})
		}
		if len(got) != len(want) {
			t.Fatalf("N=%d: %d operations run, the pattern intends %d", n, len(got), len(want))
		}
		for k, at := range want {
			if got[int64(k)] != at {
				t.Fatalf("N=%d: operation %d intended at %v since the start, the single run at %v", n, k, got[int64(k)], at)
			}
		}
	}
}
