package schedule

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/relaybench/relaybench/internal/mono"
	"github.com/relaybench/relaybench/internal/numfmt"
	"github.com/relaybench/relaybench/metrics"
)

// fake returns c set up for a fake clock (runtime timers only).
func fake(c Config) Config { c.coarse = true; return c }

// checkBalance checks that every intended op is accounted for exactly once.
func checkBalance(t *testing.T, r *Result) {
	t.Helper()
	if got := r.Accepted + r.Refused + r.Failed + r.Dropped + r.Canceled + r.Unfinished; got != r.Intended {
		t.Fatalf("accepted %d + refused %d + failed %d + dropped %d + canceled %d + unfinished %d = %d, intended %d",
			r.Accepted, r.Refused, r.Failed, r.Dropped, r.Canceled, r.Unfinished, got, r.Intended)
	}
	sums := map[string]int64{}
	for _, s := range r.Phase("check").Series {
		for k, v := range s.Counts {
			sums[k] += v
		}
	}
	for k, want := range map[string]int64{"intended": r.Intended, "accepted": r.Accepted, "refused": r.Refused,
		"failed": r.Failed, "dropped": r.Dropped} {
		if sums[k] != want {
			t.Fatalf("series %q sums to %d, result has %d", k, sums[k], want)
		}
	}
}

// A zero-time op is started exactly at every intended time of the pattern.
func TestRunExactOnFakeClock(t *testing.T) {
	for _, p := range []Pattern{
		must(Constant(1000, 3*time.Second)),
		must(Ramp(0, 100, 10*time.Second)),
		must(Sine(50, 150, 2*time.Second, 4*time.Second)),
		must(Poisson(must(Constant(500, 2*time.Second)), 3)),
	} {
		synctest.Test(t, func(t *testing.T) {
			var mu sync.Mutex
			var got []int64
			var wrong int
			r, err := Run(t.Context(), fake(Config{Pattern: p, Pool: 4}), func(_ context.Context, intended int64, _ int) Outcome {
				now := mono.Now()
				mu.Lock()
				if now != intended {
					wrong++ // the fake clock stands still while ops start: exact
				}
				got = append(got, intended)
				mu.Unlock()
				return Outcome{Accepted: true}
			})
			if err != nil {
				t.Fatal(err)
			}
			want := slices.Collect(IntendedTimes(p))
			slices.Sort(got)
			if len(got) != len(want) {
				t.Fatalf("%s: %d ops run, pattern intends %d", p, len(got), len(want))
			}
			for i := range want {
				if got[i]-r.Start != int64(want[i]) {
					t.Fatalf("%s: op %d intended at %v, pattern says %v", p, i+1, time.Duration(got[i]-r.Start), want[i])
				}
			}
			if wrong != 0 {
				t.Fatalf("%s: %d ops started off their intended time", p, wrong)
			}
			if r.Intended != int64(len(want)) || r.Sent != r.Intended || r.Accepted != r.Intended || r.Dropped != 0 {
				t.Fatalf("%s: intended %d sent %d accepted %d dropped %d", p, r.Intended, r.Sent, r.Accepted, r.Dropped)
			}
			if r.Lateness.Max() > 1 || r.Latency.Max() > 1 || r.ClientLimited {
				t.Fatalf("%s: lateness max %d latency max %d limited %v", p, r.Lateness.Max(), r.Latency.Max(), r.ClientLimited)
			}
			checkBalance(t, r)
		})
	}
}

// A 50 ms op with a pool of 2 at 100/s: the pool serves 40/s, so the
// corrected latency grows with the backlog while the uncorrected stays 50 ms,
// and what cannot start within MaxLateness is dropped and counted.
func TestRunCoordinatedOmission(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := must(Constant(100, 10*time.Second))
		r, err := Run(t.Context(), fake(Config{Pattern: p, Pool: 2, MaxLateness: time.Second}),
			func(context.Context, int64, int) Outcome {
				time.Sleep(50 * time.Millisecond)
				return Outcome{Accepted: true}
			})
		if err != nil {
			t.Fatal(err)
		}
		checkBalance(t, r)
		if r.Intended != 1000 {
			t.Fatalf("intended %d, want 1000", r.Intended)
		}
		// 2 workers × 20 ops/s for ~11 s (the last ops start up to 1 s late).
		if r.Accepted < 400 || r.Accepted > 442 {
			t.Fatalf("accepted %d, want ~420", r.Accepted)
		}
		if r.Dropped != r.Intended-r.Accepted {
			t.Fatalf("dropped %d, want intended − accepted = %d", r.Dropped, r.Intended-r.Accepted)
		}
		unc, lat := r.Uncorrected, r.Latency
		if unc.Quantile(99) < 49_900_000 || unc.Max() > 50_100_000 {
			t.Fatalf("uncorrected p99 %v max %v, want 50ms", time.Duration(unc.Quantile(99)), time.Duration(unc.Max()))
		}
		if lat.Quantile(99) < 900_000_000 || lat.Quantile(50) < 500_000_000 {
			t.Fatalf("corrected p50 %v p99 %v, want ≫ 50ms", time.Duration(lat.Quantile(50)), time.Duration(lat.Quantile(99)))
		}
		if lat.Max() > int64(time.Second+50*time.Millisecond)+2_000_000 {
			t.Fatalf("corrected max %v beyond MaxLateness + op time", time.Duration(lat.Max()))
		}
		// The dispatcher's share is over the ops of the lateness (the
		// dropped ones are in neither), so it cannot exceed it.
		if d, l := r.DispatchLateness, r.Lateness; d.Count() != l.Count() || d.Quantile(99) > l.Quantile(99) || d.Max() > l.Max() {
			t.Fatalf("dispatch lateness n %d p99 %v max %v, lateness n %d p99 %v max %v", d.Count(), time.Duration(d.Quantile(99)),
				time.Duration(d.Max()), l.Count(), time.Duration(l.Quantile(99)), time.Duration(l.Max()))
		}
		if !r.ClientLimited || !strings.Contains(r.ClientLimitedWhy, "pool of 2 was full") || r.MaxInFlight != 2 {
			t.Fatalf("limited %v %q max in flight %d", r.ClientLimited, r.ClientLimitedWhy, r.MaxInFlight)
		}
		ph := r.Phase("load")
		if ph.Counts["dropped"] != r.Dropped || ph.Latency["ok"].Percentiles["99"] != lat.Quantile(99) ||
			ph.Latency["ok_uncorrected"].Count != r.Accepted || !ph.ClientLimited {
			t.Fatalf("phase %+v", ph)
		}
		found := false
		for _, n := range ph.Notes {
			found = found || strings.Contains(n, numfmt.Group(r.Dropped)+" operations dropped") && strings.Contains(n, "pool of 2 was full")
		}
		if !found {
			t.Fatalf("no drop note in %q", ph.Notes)
		}
		// The lateness note states the fact; whose doing it was is the load
		// workload's one judgement (here the relay's: the pool was full).
		late := false
		for _, n := range ph.Notes {
			late = late || strings.Contains(n, "sent late (p99 over")
			if strings.Contains(n, "client limited") {
				t.Errorf("a note judges the client before the workload does: %q", n)
			}
		}
		if !late {
			t.Errorf("no lateness note in %q", ph.Notes)
		}
	})
}

// With the queue in front of the pool full, the dispatcher drops ops itself
// once they are too late, without blocking.
func TestRunDropsWhenQueueFull(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := must(Constant(5000, 2*time.Second))
		r, err := Run(t.Context(), fake(Config{Pattern: p, Pool: 1, MaxLateness: 100 * time.Millisecond}),
			func(context.Context, int64, int) Outcome {
				time.Sleep(time.Second)
				return Outcome{Accepted: true}
			})
		if err != nil {
			t.Fatal(err)
		}
		checkBalance(t, r)
		if r.Intended != 10000 || r.DroppedFull == 0 || r.Dropped <= r.DroppedFull || r.Accepted < 2 || r.Accepted > 3 {
			t.Fatalf("intended %d accepted %d dropped %d (full %d)", r.Intended, r.Accepted, r.Dropped, r.DroppedFull)
		}
	})
}

func TestRunCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second+100*time.Microsecond)
		defer cancel()
		p := must(Constant(100, time.Minute))
		start := time.Now()
		r, err := Run(ctx, fake(Config{Pattern: p, Pool: 4}), func(context.Context, int64, int) Outcome {
			return Outcome{Accepted: true}
		})
		if err != nil {
			t.Fatal(err)
		}
		if el := time.Since(start); el > 5*time.Second+time.Millisecond {
			t.Fatalf("Run took %v after cancel at 5s", el)
		}
		if !r.Interrupted || r.Intended != 500 || r.Accepted != 500 || r.Canceled != 0 {
			t.Fatalf("interrupted %v intended %d accepted %d canceled %d", r.Interrupted, r.Intended, r.Accepted, r.Canceled)
		}
		checkBalance(t, r)
		if n := r.Phase("load").Notes[0]; !strings.HasPrefix(n, "interrupted after 5.00s: 500 operations had been intended (of 6,000") {
			t.Fatalf("note %q", n)
		}
	})
}

// In-flight ops get Drain to finish, then their context is cancelled; ops
// that ignore it are abandoned and counted as unfinished.
func TestRunDrain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := must(Constant(10, time.Second))
		release := make(chan struct{})
		defer close(release)
		start := time.Now()
		r, err := Run(t.Context(), fake(Config{Pattern: p, Pool: 20, Drain: 2 * time.Second}),
			func(ctx context.Context, _ int64, w int) Outcome {
				if w%2 == 0 { // honours ctx
					<-ctx.Done()
					return Outcome{Err: ctx.Err()}
				}
				<-release // ignores it: still running when Run returns
				return Outcome{Accepted: true}
			})
		if err != nil {
			t.Fatal(err)
		}
		if el := time.Since(start); el != time.Second+2*time.Second+abandonWait {
			t.Fatalf("Run took %v, want pattern 1s + drain 2s + %v", el, abandonWait)
		}
		checkBalance(t, r)
		if r.Intended != 10 || r.Sent != 10 || r.Failed+r.Unfinished != 10 || r.Failed == 0 || r.Unfinished == 0 {
			t.Fatalf("intended %d sent %d failed %d unfinished %d", r.Intended, r.Sent, r.Failed, r.Unfinished)
		}
		if r.Errors[context.Canceled.Error()] != r.Failed {
			t.Fatalf("errors %v", r.Errors)
		}
		if r.Latency.Count() != 0 {
			t.Fatalf("failed ops in the latency histogram: %d", r.Latency.Count())
		}
	})
}

// Outcomes are classified, warm-up ops kept out of the histograms, and the
// phase carries counts, rates and notes.
func TestRunOutcomesAndPhase(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := must(Constant(1000, 4*time.Second))
		var mu sync.Mutex
		k := 0
		r, err := Run(t.Context(), fake(Config{Pattern: p, Pool: 8, Warmup: time.Second}),
			func(_ context.Context, intended int64, _ int) Outcome {
				mu.Lock()
				k++
				n := k
				mu.Unlock()
				time.Sleep(2 * time.Millisecond)
				switch {
				case n%10 == 0:
					return Outcome{Err: errors.New("timeout")}
				case n%10 == 1:
					return Outcome{Refused: "rate-limited", Sent: intended + 500_000}
				case n%10 == 2:
					return Outcome{}
				}
				return Outcome{Accepted: true}
			})
		if err != nil {
			t.Fatal(err)
		}
		checkBalance(t, r)
		if r.Accepted != 2800 || r.Refused != 800 || r.Failed != 400 || r.RefusedBy["rate-limited"] != 400 || r.RefusedBy["other"] != 400 {
			t.Fatalf("accepted %d refused %d %v failed %d", r.Accepted, r.Refused, r.RefusedBy, r.Failed)
		}
		// Accepted ops only in the latency; refusals apart.
		if r.WarmupOps != 999 || r.Latency.Count()+r.RefusedLatency.Count() != r.Accepted+r.Refused-900 ||
			r.RefusedLatency.Count() == 0 || r.Uncorrected.Count() != r.Latency.Count() {
			t.Fatalf("warm-up ops %d, latency count %d, refused latency count %d", r.WarmupOps, r.Latency.Count(), r.RefusedLatency.Count())
		}
		if q := r.Uncorrected.Quantile(50); q < 1_990_000 || q > 2_010_000 {
			t.Fatalf("uncorrected p50 %v, want 2ms", time.Duration(q))
		}
		if r.Lateness.Max() < 499_000 || r.Lateness.Max() > 501_000 {
			t.Fatalf("lateness max %v, want the 0.5 ms the op reported", time.Duration(r.Lateness.Max()))
		}
		ph := r.Phase("load")
		if ph.Counts["accepted"] != 2800 || ph.Refused["rate-limited"] != 400 || len(ph.Errors) != 1 || ph.Errors[0] != "400 × timeout" {
			t.Fatalf("phase counts %v refused %v errors %v", ph.Counts, ph.Refused, ph.Errors)
		}
		if ir := ph.Rates["intended_per_sec"]; ir < 995 || ir > 1000 {
			t.Fatalf("intended rate %v", ir)
		}
		if len(ph.Series) != 5 || ph.Series[1].Counts["intended"] != 1000 || ph.Series[2].Gauges["in_flight"] < 2 {
			t.Fatalf("series %+v", ph.Series)
		}
		if ph.ClientLimited {
			t.Fatalf("limited: %v", r.ClientLimitedWhy)
		}
		notes := strings.Join(ph.Notes, "\n")
		for _, want := range []string{"400 operations failed", "exclude the 1s warm-up (999 operations)", "sent on schedule"} {
			if !strings.Contains(notes, want) {
				t.Fatalf("notes lack %q:\n%s", want, notes)
			}
		}
	})
}

func TestRunConfigErrors(t *testing.T) {
	_, err := Run(t.Context(), Config{Pool: -1, MaxLateness: -1}, nil)
	if err == nil || len(strings.Split(err.Error(), "\n")) != 4 {
		t.Fatalf("want 4 errors, got %v", err)
	}
}

// On the real clock (precise sleep), counts are exact; nothing here depends
// on timing: MaxLateness is far beyond any scheduling delay.
func TestRunRealClockCounts(t *testing.T) {
	p := must(Constant(2000, 500*time.Millisecond))
	r, err := Run(t.Context(), Config{Pattern: p, Pool: 4, MaxLateness: time.Minute}, func(context.Context, int64, int) Outcome {
		return Outcome{Accepted: true}
	})
	if err != nil {
		t.Fatal(err)
	}
	checkBalance(t, r)
	if r.Intended != 1000 || r.Accepted != 1000 || r.Lateness.Count() != 1000 || r.Lateness.Min() < 1 {
		t.Fatalf("intended %d accepted %d lateness count %d", r.Intended, r.Accepted, r.Lateness.Count())
	}
	t.Logf("real clock, 2000/s: lateness p50 %v p99 %v max %v", time.Duration(r.Lateness.Quantile(50)),
		time.Duration(r.Lateness.Quantile(99)), time.Duration(r.Lateness.Max()))
}

// The diagnosis names the cause: a full pool, a dispatcher that woke late,
// or workers that could not keep up.
func TestDiagnose(t *testing.T) {
	mk := func(pool, maxInFlight int64, dispatchLate, late int64, dropped int64) *Result {
		r := &Result{Pool: int(pool), MaxInFlight: maxInFlight, Dropped: dropped, MaxLateness: time.Second,
			Lateness: metrics.NewHistogram(), DispatchLateness: metrics.NewHistogram()}
		for range 100 {
			r.Lateness.Record(late)
			r.DispatchLateness.Record(dispatchLate)
		}
		r.diagnose()
		return r
	}
	for _, c := range []struct {
		r           *Result
		want, cause string
	}{
		{mk(8, 8, 10_000, 50_000_000, 3120), "3,120 operations dropped (not started within 1s): the pool of 8 was full; lateness p99 50.0ms above 1ms", "above 1ms: the pool of 8 was full"},
		{mk(8, 3, 20_000_000, 20_000_000, 0), "lateness p99 20.0ms above 1ms", "above 1ms: the dispatcher itself woke late"},
		{mk(8, 3, 10_000, 5_000_000, 0), "lateness p99 5.00ms above 1ms", "above 1ms: workers picked ops up late with the pool never full (max 3 of 8 in flight)"},
	} {
		if !c.r.ClientLimited || !strings.HasPrefix(c.r.ClientLimitedWhy, c.want) || !strings.Contains(c.r.ClientLimitedWhy, c.cause) {
			t.Errorf("why %q, want %q … %q", c.r.ClientLimitedWhy, c.want, c.cause)
		}
	}
	if r := mk(8, 8, 10_000, 900_000, 0); r.ClientLimited {
		t.Errorf("on time but limited: %q", r.ClientLimitedWhy)
	}
}

// The note of a pool that filled at times says plainly what Little's law
// gives: the ops in flight on average, and whether the pool was too small
// for the rate (at or above it) or filled in bursts only.
func TestLittleNote(t *testing.T) {
	for _, c := range []struct {
		reply     time.Duration
		want, not string
	}{
		{2 * time.Millisecond, "all 10 in-flight slots (--load-pool) were busy at times, though the offered rate needs only 1 op in flight on average (500 ops/s × 2.00ms mean reply time, Little's law): the slots filled only in bursts", "too small"},
		{14 * time.Millisecond, "though the offered rate needs only 7 ops in flight on average (500 ops/s × 14.0ms mean reply time, Little's law): the slots filled only in bursts", "too small"},
		// From 3/4 of the pool the average alone keeps most slots busy:
		// no "only", no "in bursts".
		{15900 * time.Microsecond, "the offered rate needs 7.95 ops in flight on average (500 ops/s × 15.9ms mean reply time, Little's law), 79% of the 10 slots: on average that many are busy, so a few replies slower than the mean fill the pool and ops often wait for a slot; the pool is nearly too small", "only"},
		{18 * time.Millisecond, "the offered rate needs 9 ops in flight on average (500 ops/s × 18.0ms mean reply time, Little's law), 90% of the 10 slots", "bursts"},
		{40 * time.Millisecond, "the offered rate would need 20 ops in flight on average (500 ops/s × 40.0ms mean reply time, Little's law), at least as many as the 10 slots hold: the pool is too small", "bursts"},
	} {
		r := &Result{Pool: 10, MaxInFlight: 10, Intended: 500, Start: 1, End: 1 + int64(time.Second), Uncorrected: metrics.NewHistogram(), Latency: metrics.NewHistogram()}
		r.Uncorrected.Record(int64(c.reply))
		r.Latency.Record(int64(c.reply))
		got := r.littleNote()
		if !strings.Contains(got, c.want) || strings.Contains(got, c.not) || strings.Contains(got, "must be") {
			t.Errorf("reply %v: %q\nwant %q", c.reply, got, c.want)
		}
	}
}

// The hooks see every counted op exactly once, with its position in the
// pattern: finished ones through Recorded, dropped ones through Dropped.
func TestRunSlotsHooks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := must(Constant(100, time.Second))
		var mu sync.Mutex
		seen := map[int64]string{}
		mark := func(seq int64, what string) {
			mu.Lock()
			defer mu.Unlock()
			if seen[seq] != "" {
				t.Errorf("slot %d reported twice (%s, %s)", seq, seen[seq], what)
			}
			seen[seq] = what
		}
		cfg := fake(Config{Pattern: p, Pool: 1, MaxLateness: 50 * time.Millisecond,
			Recorded: func(s Slot, out Outcome) { mark(s.Seq, "recorded") },
			Dropped:  func(s Slot) { mark(s.Seq, "dropped") },
		})
		r, err := RunSlots(t.Context(), cfg, func(_ context.Context, s Slot, _ int) Outcome {
			if s.Seq%10 == 0 {
				time.Sleep(100 * time.Millisecond) // the pool of 1 is busy: later ops drop
			}
			return Outcome{Accepted: true}
		})
		if err != nil {
			t.Fatal(err)
		}
		checkBalance(t, r)
		var rec, drop int64
		for _, w := range seen {
			if w == "recorded" {
				rec++
			} else {
				drop++
			}
		}
		if rec != r.Accepted || drop != r.Dropped || drop == 0 || rec+drop != 100 {
			t.Fatalf("hooks: %d recorded, %d dropped; result: %d accepted, %d dropped", rec, drop, r.Accepted, r.Dropped)
		}
	})
}

// The pool note reads right at one slot and at a load needing under one
// op in flight: no "all 1 slots", no "about 0".
func TestPoolNoteWording(t *testing.T) {
	r := &Result{Pool: 1, MaxInFlight: 1, Intended: 200, Start: 0, End: int64(time.Second),
		Latency: metrics.NewHistogram(), Uncorrected: metrics.NewHistogram(), Lateness: metrics.NewHistogram()}
	for range 200 {
		r.Latency.Record(700_000)
		r.Uncorrected.Record(668_360)
	}
	got := strings.Join(r.notes(), "\n")
	if !strings.Contains(got, "the one in-flight slot (--load-pool) was busy at times, though the offered rate needs only 0.134 ops in flight on average (200 ops/s × 668µs mean reply time, Little's law): it filled only in bursts") {
		t.Errorf("pool note: %q", got)
	}
}

// TestRateWhenFull: the rate a full pool is judged at is the pattern's
// over the seconds the pool was full (a spike's peak, the base before it),
// none when it never filled; OfferedRate falls back to the average.
func TestRateWhenFull(t *testing.T) {
	p := must(Spike(500, 5000, 2*time.Second, time.Second, 6*time.Second))
	for _, c := range []struct {
		inFlight []int64
		want     float64
	}{
		{[]int64{3, 3, 10, 4, 3, 3}, 5000},
		{[]int64{10, 3, 3, 4, 3, 3}, 500},
		{[]int64{3, 3, 9, 4, 3, 3}, 0},
	} {
		if got := rateWhenFull(p, c.inFlight, 10); got != c.want {
			t.Errorf("in flight %v: rate %v, want %v", c.inFlight, got, c.want)
		}
	}
	r := &Result{Intended: 7500}
	if got := r.OfferedRate(6); got != 1250 {
		t.Errorf("no full rate: %v, want the average 1250", got)
	}
	r.FullRate = 5000
	if got := r.OfferedRate(6); got != 5000 {
		t.Errorf("full rate 5000: %v", got)
	}
}
