package schedule

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/relaybench/relaybench/internal/mono"
	"github.com/relaybench/relaybench/internal/numfmt"
	"github.com/relaybench/relaybench/metrics"
	"github.com/relaybench/relaybench/results"
)

// Result is what Run measured. Every intended operation ends in exactly one
// of Accepted, Refused, Failed, Dropped, Canceled or Unfinished:
//
//	Intended = Accepted + Refused + Failed + Dropped + Canceled + Unfinished
//	Sent     = Accepted + Refused + Failed + (ops still running at the end)
type Result struct {
	Pattern     string // the pattern's description
	Pool        int
	MaxLateness time.Duration
	Warmup      time.Duration
	Drain       time.Duration
	MinSleep    time.Duration

	Intended int64 // intended times reached before dispatching stopped
	Sent     int64 // started by a worker
	Accepted int64
	Refused  int64
	Failed   int64 // no reply: Outcome.Err set (timeouts, connection errors)
	// Dropped could not start within MaxLateness of their intended time;
	// DroppedFull of them were dropped by the dispatcher because the queue in
	// front of the pool stayed full, the rest by the worker that picked them
	// up too late.
	Dropped, DroppedFull int64
	Canceled             int64 // intended before an interruption but never started
	Unfinished           int64 // handed to the pool, not finished when the drain ended
	WarmupOps            int64 // intended during the warm-up: counted, not in the histograms

	RefusedBy map[string]int64 // refusals by class ("other" when the op gave none)
	Errors    map[string]int64 // failures by message (at most 16 kinds, then "other errors")

	Latency     *metrics.Histogram // Done − intended, accepted ops (corrected)
	Uncorrected *metrics.Histogram // Done − Sent, accepted ops
	// RefusedLatency is Done − intended of refused ops, kept apart so that a
	// fast "rate-limited:" never flatters the latency of served ops.
	RefusedLatency *metrics.Histogram
	Lateness       *metrics.Histogram // Sent − intended, every op started (failed ones too)
	// DispatchLateness is when the dispatcher queued each op (or began
	// waiting for room in the queue) − intended, over the ops of Lateness:
	// the part of Lateness due to waking the dispatcher, the rest is
	// waiting for a worker to pick it up.
	DispatchLateness *metrics.Histogram
	// Series per second: counts "intended" and "dropped" (by intended
	// second), "sent" (by send), "accepted", "refused", "failed" (by reply),
	// gauge "in_flight" (max), and the corrected latency (by reply).
	Series *metrics.Series

	Start, End  int64 // mono ns: t = 0 of the pattern, and when the last op finished or was abandoned
	MaxInFlight int64
	Interrupted bool // ctx was cancelled before the pattern's end

	planned int64 // operations in the whole pattern

	// ClientLimited is true when the load generator, not the relay, limited
	// what was sent: ops dropped, or lateness p99 above OnTime.
	// ClientLimitedWhy says why, in a sentence.
	ClientLimited    bool
	ClientLimitedWhy string

	// FullRate is the offered rate (ops/s) when the pool was full: the
	// pattern's highest rate over the seconds whose in-flight count reached
	// the pool (a spike's peak, not the run's average); 0 when it never did.
	FullRate float64
}

// OfferedRate is the offered rate the pool's filling is judged at:
// FullRate when known, else the intended ops over secs (the average).
func (r *Result) OfferedRate(secs float64) float64 {
	if r.FullRate > 0 {
		return r.FullRate
	}
	if secs <= 0 {
		return 0
	}
	return float64(r.Intended) / secs
}

// rateWhenFull is FullRate: the highest rate of p over the seconds whose
// in-flight count (inFlight, per second) reached pool, sampled every 10 ms.
func rateWhenFull(p Pattern, inFlight []int64, pool int) float64 {
	peak := 0.0
	for i, n := range inFlight {
		if n < int64(pool) {
			continue
		}
		for ms := 0; ms < 1000; ms += 10 {
			t := time.Duration(i)*time.Second + time.Duration(ms)*time.Millisecond
			if t > p.Duration() {
				break
			}
			peak = max(peak, p.Rate(t))
		}
	}
	return peak
}

// poolFull reports whether every worker was busy at some point.
func (r *Result) poolFull() bool { return r.MaxInFlight >= int64(r.Pool) }

// diagnose sets ClientLimited and ClientLimitedWhy.
func (r *Result) diagnose() {
	var why []string
	cause := r.lateCause()
	if r.Dropped > 0 {
		why = append(why, fmt.Sprintf("%s dropped (not started within %v): %s", numfmt.Count(r.Dropped, "operation"), r.MaxLateness, cause))
	}
	if r.Lateness.Count() > 0 {
		if p99 := r.Lateness.Quantile(99); p99 > int64(OnTime) {
			why = append(why, fmt.Sprintf("lateness p99 %v above %v: %s", round(p99), OnTime, cause))
		}
	}
	r.ClientLimited = len(why) > 0
	r.ClientLimitedWhy = strings.Join(why, "; ")
}

// lateCause explains why ops started late or were dropped.
func (r *Result) lateCause() string {
	switch {
	case r.poolFull():
		return fmt.Sprintf("the pool of %d was full", r.Pool)
	case r.DispatchLateness != nil && r.DispatchLateness.Count() > 0 && r.DispatchLateness.Quantile(99) > int64(OnTime):
		return fmt.Sprintf("the dispatcher itself woke late (dispatch lateness p99 %v, pool never full): the CPUs were busy (%d for Go)",
			round(r.DispatchLateness.Quantile(99)), gomaxprocs())
	default:
		return fmt.Sprintf("workers picked ops up late with the pool never full (max %d of %d in flight): the client's CPU could not keep up (%d for Go)",
			r.MaxInFlight, r.Pool, gomaxprocs())
	}
}

// Phase returns the measurement in the results-file form: counts, rates over
// the phase (Start to End), latency "ok" (accepted ops, corrected: from the
// intended time), "ok_uncorrected" (from the actual send), "ok_refused"
// (refusals, corrected), "lateness" and "lateness_dispatch", the per-second
// series, and notes a reader must see.
func (r *Result) Phase(name string) results.Phase {
	dur := r.End - r.Start
	secs := float64(dur) / 1e9
	p := results.NewPhase(name, "load")
	p.Params = map[string]any{
		"pattern": r.Pattern, "pool": r.Pool, "max_lateness_ns": int64(r.MaxLateness),
		"warmup_ns": int64(r.Warmup), "drain_ns": int64(r.Drain), "min_sleep_ns": int64(r.MinSleep),
	}
	p.Start, p.Duration = mono.Time(r.Start), dur
	p.Counts = map[string]int64{
		"intended": r.Intended, "sent": r.Sent, "accepted": r.Accepted, "refused": r.Refused,
		"failed": r.Failed, "dropped": r.Dropped, "canceled": r.Canceled, "unfinished": r.Unfinished,
	}
	p.Rates = map[string]float64{}
	p.Latency["ok"], p.Latency["ok_uncorrected"], p.Latency["lateness"] = r.Latency.Result(), r.Uncorrected.Result(), r.Lateness.Result()
	p.Series = r.Series.Result(r.End + 1) // the second containing End too
	p.ClientLimited = r.ClientLimited
	if r.RefusedLatency != nil && r.RefusedLatency.Count() > 0 {
		p.Latency["ok_refused"] = r.RefusedLatency.Result()
	}
	if r.DispatchLateness != nil {
		p.Latency["lateness_dispatch"] = r.DispatchLateness.Result()
	}
	if len(r.RefusedBy) > 0 {
		p.Refused = map[string]int64{}
		for k, v := range r.RefusedBy {
			p.Refused[k] = v
		}
	}
	if secs > 0 {
		p.Rates["intended_per_sec"] = float64(r.Intended) / secs
		p.Rates["sent_per_sec"] = float64(r.Sent) / secs
		p.Rates["accepted_per_sec"] = float64(r.Accepted) / secs
	}
	p.Notes = r.notes()
	msgs := make([]string, 0, len(r.Errors))
	for k := range r.Errors {
		msgs = append(msgs, k)
	}
	sort.Slice(msgs, func(i, j int) bool { return r.Errors[msgs[i]] > r.Errors[msgs[j]] })
	for _, m := range msgs {
		p.Errors = append(p.Errors, fmt.Sprintf("%s × %s", numfmt.Group(r.Errors[m]), m))
	}
	return p
}

func (r *Result) notes() []string {
	var n []string
	if r.Interrupted {
		unstarted := numfmt.Group(r.Canceled) + " of them never started"
		switch { // "1 operation had been intended …, 1 of them" reads as a miscount
		case r.Intended == 1 && r.Canceled > 0:
			unstarted = "it never started"
		case r.Intended == 1:
			unstarted = "it started"
		}
		n = append(n, fmt.Sprintf("interrupted after %s: %s had been intended (of %s in the pattern), %s",
			numfmt.Dur(time.Duration(r.End-r.Start)), numfmt.Count(r.Intended, "operation"), numfmt.Group(r.planned), unstarted))
	}
	if r.Dropped > 0 {
		their := "their"
		if r.Dropped == 1 {
			their = "its"
		}
		n = append(n, fmt.Sprintf("%s dropped (not started within %v of %s intended time): %s",
			numfmt.Count(r.Dropped, "operation"), r.MaxLateness, their, r.lateCause()))
	}
	if r.poolFull() && r.Latency.Count() > 0 && r.End > r.Start {
		n = append(n, r.littleNote())
	}
	if r.Unfinished > 0 {
		n = append(n, fmt.Sprintf("%s not finished when the %v drain ended: abandoned", numfmt.Count(r.Unfinished, "operation"), r.Drain))
	}
	if r.Failed > 0 {
		n = append(n, fmt.Sprintf("%s failed without a reply (see errors), left out of the latency histograms", numfmt.Count(r.Failed, "operation")))
	}
	if r.Warmup > 0 {
		n = append(n, fmt.Sprintf("latency and lateness exclude the %v warm-up (%s)", r.Warmup, numfmt.Count(r.WarmupOps, "operation")))
	}
	if r.Lateness.Count() > 0 {
		p99, mx := r.Lateness.Quantile(99), r.Lateness.Max()
		// Only the fact: whose doing the lateness was (the client's, or
		// the relay's when every worker waited on it) is the load
		// workload's one judgement, in a note of its own.
		verdict := "sent on schedule"
		if p99 > int64(OnTime) {
			verdict = fmt.Sprintf("sent late (p99 over %v)", OnTime)
		}
		disp := round(0)
		if r.DispatchLateness != nil {
			disp = round(r.DispatchLateness.Quantile(99))
		}
		n = append(n, fmt.Sprintf("lateness (actual send − intended) p99 %v, max %v (dispatcher's share p99 %v): %s",
			round(p99), round(mx), disp, verdict))
	}
	return n
}

// littleNote says what a pool that filled at times means: by Little's law
// the ops the offered rate needs in flight on average are the offered rate
// when the pool filled (OfferedRate: a spike's peak, not the run's
// average, nor the achieved rate) times the mean reply time (the demand, not what went through the pool:
// ops that waited or were dropped never were in flight), given with three
// significant digits. Well below the pool (under 3/4 of it) the slots
// filled in bursts only; from 3/4 of it, the average alone kept most slots
// busy, so ops often waited for one; at or above it, the pool was too
// small for this rate at these reply times.
func (r *Result) littleNote() string {
	rate := r.OfferedRate(float64(r.End-r.Start) / 1e9)
	mean := r.Uncorrected.Mean()
	need := rate * mean / 1e9
	slots, filled := numfmt.AllOf(r.Pool, "in-flight slot")+" (--load-pool) "+numfmt.Were(r.Pool), "the slots filled"
	if r.Pool == 1 {
		filled = "it filled"
	}
	avg := opsInFlight(need)
	offered := "ops/s"
	if r.FullRate > 0 {
		offered = "ops/s offered when the pool filled"
	}
	why := fmt.Sprintf("%s %s × %v mean reply time, Little's law", numfmt.Group(int64(math.Round(rate))), offered, round(int64(mean)))
	switch {
	case need < 0.75*float64(r.Pool):
		return fmt.Sprintf("%s busy at times, though the offered rate needs only %s in flight on average (%s): %s only in bursts", slots, avg, why, filled)
	case need < float64(r.Pool):
		return fmt.Sprintf("%s busy at times: the offered rate needs %s in flight on average (%s), %.0f%% of the %d slots: on average that many are busy, so a few replies slower than the mean fill the pool and ops often wait for a slot; the pool is nearly too small for this rate at these reply times",
			slots, avg, why, 100*need/float64(r.Pool), r.Pool)
	}
	return fmt.Sprintf("%s busy at times: the offered rate would need %s in flight on average (%s), at least as many as the %d slots hold: the pool is too small for this rate at these reply times",
		slots, avg, why, r.Pool)
}

// opsInFlight is Little's-law demand in words, three significant digits:
// "0.25 ops", "1 op", "1.59 ops", "15.9 ops", "1,590 ops".
func opsInFlight(need float64) string {
	// three significant digits, formatted from need itself: a value
	// rounded first keeps the binary's noise (a walk read "1.8900000000000001 ops")
	s := strconv.FormatFloat(need, 'g', 3, 64)
	if need >= 1000 {
		s = numfmt.Group(int64(math.Round(need)))
	} else if need < 0.001 {
		s = "under 0.001"
	}
	if s == "1" {
		return "1 op"
	}
	return s + " ops"
}

// round shows ns with the three significant digits a reader can use.
func round(ns int64) string { return numfmt.Dur(time.Duration(ns)) }
