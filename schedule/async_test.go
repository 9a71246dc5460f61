package schedule

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// RunAsync starts ops without waiting: with replies after 20 ms, a pool of
// 10 keeps up with 100/s (2 in flight on average), every op is answered and
// the uncorrected latency is the reply time.
func TestRunAsyncKeepsUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := must(Constant(100, 5*time.Second))
		r, err := RunAsync(t.Context(), fake(Config{Pattern: p, Pool: 10}),
			func(_ context.Context, _ int64, _ int, done func(Outcome)) {
				time.AfterFunc(20*time.Millisecond, func() { done(Outcome{Accepted: true}) })
			})
		if err != nil {
			t.Fatal(err)
		}
		checkBalance(t, r)
		if r.Intended != 500 || r.Accepted != 500 || r.Dropped != 0 {
			t.Fatalf("intended %d accepted %d dropped %d", r.Intended, r.Accepted, r.Dropped)
		}
		if u := r.Uncorrected.Quantile(99); u < 19_900_000 || u > 20_100_000 {
			t.Fatalf("uncorrected p99 %v, want 20ms", time.Duration(u))
		}
		if r.MaxInFlight > 10 || r.MaxInFlight < 2 {
			t.Fatalf("max in flight %d", r.MaxInFlight)
		}
	})
}

// Coordinated omission with the async form: replies after 50 ms and a pool of
// 2 serve 40/s of the 100/s offered; the corrected latency grows, the
// uncorrected stays 50 ms, and ops with no slot within MaxLateness are
// dropped and counted, never lost.
func TestRunAsyncCoordinatedOmission(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := must(Constant(100, 10*time.Second))
		r, err := RunAsync(t.Context(), fake(Config{Pattern: p, Pool: 2, MaxLateness: time.Second}),
			func(_ context.Context, _ int64, _ int, done func(Outcome)) {
				time.AfterFunc(50*time.Millisecond, func() { done(Outcome{Accepted: true}) })
			})
		if err != nil {
			t.Fatal(err)
		}
		checkBalance(t, r)
		if r.Intended != 1000 || r.Dropped == 0 || r.Dropped != r.Intended-r.Accepted {
			t.Fatalf("intended %d accepted %d dropped %d", r.Intended, r.Accepted, r.Dropped)
		}
		if r.Accepted < 380 || r.Accepted > 442 {
			t.Fatalf("accepted %d, want ~420 (2 slots × 20/s)", r.Accepted)
		}
		unc, lat := r.Uncorrected, r.Latency
		if unc.Quantile(99) < 49_900_000 || unc.Max() > 50_100_000 {
			t.Fatalf("uncorrected p99 %v, want 50ms", time.Duration(unc.Quantile(99)))
		}
		if lat.Quantile(99) < 900_000_000 {
			t.Fatalf("corrected p99 %v, want ≫ 50ms", time.Duration(lat.Quantile(99)))
		}
		if r.MaxInFlight != 2 {
			t.Fatalf("max in flight %d, want the pool's 2", r.MaxInFlight)
		}
	})
}

// Ops whose reply never comes end at the drain deadline (their context is
// cancelled and they answer with an error): none is lost, RunAsync returns.
func TestRunAsyncDrainBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := must(Constant(10, time.Second))
		r, err := RunAsync(t.Context(), fake(Config{Pattern: p, Pool: 100, Drain: time.Second}),
			func(ctx context.Context, _ int64, _ int, done func(Outcome)) {
				context.AfterFunc(ctx, func() { done(Outcome{Err: ctx.Err()}) })
			})
		if err != nil {
			t.Fatal(err)
		}
		checkBalance(t, r)
		if r.Intended != 10 || r.Accepted != 0 || r.Failed+r.Unfinished != 10 {
			t.Fatalf("intended %d accepted %d failed %d unfinished %d", r.Intended, r.Accepted, r.Failed, r.Unfinished)
		}
	})
}
