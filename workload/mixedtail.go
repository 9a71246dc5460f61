package workload

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/relaybench/relaybench/internal/numfmt"
	"github.com/relaybench/relaybench/results"
)

// tailFactor is how many times the median OK p99 of a publish-alone
// part's other seconds its slowest second's must reach to be named as the
// part's p99 (the tail of the work before the part, or one stall).
const tailFactor = 3

// partFactor is how many times the median of the other seconds' OK p99 the
// part's p99 must reach for the note to say the slowest second made it.
const partFactor = 2

// slowSecondNote is the note of a publishing part whose OK p99 (okP99,
// the whole part's) came from one second: that second's p99 is tailFactor
// times or more the median of the other seconds' (the median, so that
// another slow second on a busy machine does not hide it), the part's p99
// is at least partFactor times that median (a second slower than the rest
// that left the part's p99 near a typical second's made no baseline
// unfair: on a calm machine a 1.48 ms first second beside 397 µs later ones
// left a part p99 of 561 µs, and the note called it the preload's tail),
// and above every other second's p99 (else the part's p99 is not one
// second's). The first second: right after the preload (the corpus
// published pipelined, thousands of events a second) the relay may still
// be busy with its tail (a queue, compaction, GC, the kernel writing the
// preload to disk): the "alone" baseline then measures that tail, and
// "together" reads faster. When the settle wait saw the relay's CPU settle
// before the part (relaySettled), the tail is not the likely cause and the
// note does not name it: the first second's own costs are (a walk read
// "the preload's queue" beside the settle note saying the relay had
// settled). A later second: one stall of the relay or the machine (a walk
// against a relay it had filled read "OK p99 0.0947× (faster together)":
// 40 of 2,000 events alone waited 30-50 ms in one stall). series is the
// part's per-second OK latency (points a second wide, or FineStep wide for
// a short part: a second's p99 is then the highest of its points', an
// upper bound). "" when the rule does not hold or there is no other second
// to compare with.
func slowSecondNote(series []results.Second, okP99 int64, relaySettled bool) string {
	bySec := map[int64]int64{}
	for _, p := range series {
		sec := int64(p.T)
		if p.WidthMs > 0 {
			sec = p.AtMs / 1000
		}
		if p.LatP99Ns > 0 {
			bySec[sec] = max(bySec[sec], p.LatP99Ns)
		}
	}
	if len(bySec) < 2 {
		return ""
	}
	secs := slices.Sorted(maps.Keys(bySec))
	slow := secs[0]
	for _, sec := range secs {
		if bySec[sec] > bySec[slow] {
			slow = sec // the earliest of equals: the first second keeps its reading
		}
	}
	var others []int64
	for _, sec := range secs {
		if sec != slow {
			others = append(others, bySec[sec])
		}
	}
	slices.Sort(others)
	rest := others[len(others)/2] // the upper middle of an even count: the harder to exceed
	worst := bySec[slow]
	if worst < tailFactor*rest || okP99 < partFactor*rest || okP99 <= others[len(others)-1] {
		return ""
	}
	if slow == 0 {
		why := "when the relay was likely still busy with the work before it (the preload's queue, compaction, GC or disk writes)"
		if relaySettled {
			why = "though the relay's CPU had settled after the preload (the settle note): a first second's own costs (the relay's or the client's warm-up, or the machine's other work)"
		}
		return fmt.Sprintf("OK p99 %v in the part's first second, %.0f× the median of its later seconds (%v): the part's p99 %v %s, %s; the later seconds are the fairer baseline for the together/alone OK ratios",
			numfmt.Dur(time.Duration(worst)), float64(worst)/float64(rest), numfmt.Dur(time.Duration(rest)), numfmt.Dur(time.Duration(okP99)), results.NoteOneSecond, why)
	}
	return fmt.Sprintf("OK p99 %v in the part's second %d (from %d s to %d s), %.0f× the median of its other seconds (%v): the part's p99 %v %s, one stall of the relay or the machine; the other seconds are the fairer baseline for the together/alone OK ratios",
		numfmt.Dur(time.Duration(worst)), slow+1, slow, slow+1, float64(worst)/float64(rest), numfmt.Dur(time.Duration(rest)), numfmt.Dur(time.Duration(okP99)), results.NoteOneSecond)
}

// The settle wait before mixed's first part: steps of settleStep, until
// the relay used less than settleCores over one, for at most settleMax.
const (
	settleStep  = 250 * time.Millisecond
	settleMax   = 2 * time.Second
	settleCores = 0.25
)

// settleRelay waits, after the preload, until the relay's CPU (sampled
// with begin over steps of step) falls below settleCores, for at most
// settleMax, so that the publish-alone part does not measure the preload's
// tail. It returns the note that says the wait ("" when the relay is not
// observed: begin nil or giving no figures, or ctx ended) and whether the
// relay's CPU settled.
func settleRelay(ctx context.Context, begin Sampler, step time.Duration) (string, bool) {
	if begin == nil {
		return "", false
	}
	t0 := time.Now()
	for {
		end, s0 := begin(), time.Now()
		select {
		case <-ctx.Done():
			end()
			return "", false
		case <-time.After(step):
		}
		r := end()
		if r == nil {
			return "", false
		}
		cores := r.RelayCPUSecs / time.Since(s0).Seconds()
		waited := numfmt.Dur(time.Since(t0))
		if cores < settleCores {
			return fmt.Sprintf("settle: publish/alone began once the relay's CPU had settled after the preload (%.2f cores over the last %v; waited %v)", cores, step, waited), true
		}
		if time.Since(t0) >= settleMax {
			return fmt.Sprintf("settle: the relay's CPU had not settled after the preload when publish/alone began (%.2f cores over the last %v after waiting %v, the most mixed waits): the alone part may measure the preload's tail", cores, step, waited), false
		}
	}
}
