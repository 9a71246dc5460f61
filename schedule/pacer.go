package schedule

import (
	"fmt"
	"iter"
	"math"
	"math/rand/v2"
	"time"
)

// hitsSlack absorbs floating-point error when the total of a pattern is an
// integer: a constant 1000/s for 60 s is 60,000 operations, not 59,999.
const hitsSlack = 1e-9

// Pacer yields the intended time (since the run's start) of every operation
// of a pattern, in order. The k-th operation (k = 1, 2, …) is intended at the
// smallest t (to the nanosecond) with Hits(t) ≥ k, computed in closed form
// where the pattern allows (constant, ramp, step, spike, burst) and by
// Newton-guided bisection on the monotone Hits otherwise (sine, patterns from
// other packages), so no error accumulates over a run. Poisson patterns yield
// their seeded random arrivals. A Pacer is not safe for concurrent use.
type Pacer struct {
	base  Pattern // the pattern whose Hits is inverted
	inv   inverter
	total float64 // base.Hits(Duration)
	n     int64   // operations of a deterministic pattern
	k     int64   // operations yielded
	last  time.Duration
	rng   *rand.Rand // Poisson arrivals; nil for deterministic patterns
	s     float64    // Poisson: unit-rate arrival time (in hits)
}

// NewPacer returns a pacer at the start of p.
func NewPacer(p Pattern) *Pacer {
	pc := &Pacer{base: p}
	if ps, ok := p.(*poisson); ok {
		pc.base = ps.base
		pc.rng = ps.newRand()
	}
	pc.inv, _ = pc.base.(inverter)
	pc.total = pc.base.Hits(pc.base.Duration())
	pc.n = int64(math.Floor(pc.total + hitsSlack))
	return pc
}

// Next returns the intended time of the next operation, or false when the
// pattern has no more.
func (pc *Pacer) Next() (time.Duration, bool) {
	var x float64
	if pc.rng != nil {
		pc.s += pc.rng.ExpFloat64()
		if pc.s > pc.total {
			return 0, false
		}
		x = pc.s
	} else {
		if pc.k >= pc.n {
			return 0, false
		}
		x = float64(pc.k + 1)
	}
	pc.k++
	t := pc.solve(x)
	pc.last = t
	return t, true
}

// solve returns the smallest t ≥ the previous intended time with
// base.Hits(t) ≥ x, to the nanosecond.
func (pc *Pacer) solve(x float64) time.Duration {
	d := pc.base.Duration()
	var t time.Duration
	if pc.inv != nil {
		ns := pc.inv.invert(x) * 1e9
		// Remove the rounding error of the float product before rounding up
		// (k/1000 s is k·1e6 ns, not k·1e6+1).
		ns = math.Ceil(ns - math.Max(1e-3, ns*1e-15))
		t = time.Duration(ns)
	} else {
		t = numericInvert(pc.base, x, pc.last)
	}
	return min(max(t, pc.last), d)
}

// numericInvert returns the smallest t in [from, Duration] (ns) with
// p.Hits(t) ≥ x, by bisection on the monotone Hits with Newton steps where
// they land inside the bracket (a few iterations per operation instead of ~40).
func numericInvert(p Pattern, x float64, from time.Duration) time.Duration {
	lo, hi := from, p.Duration()
	if p.Hits(lo) >= x {
		return lo
	}
	if p.Hits(hi) < x {
		return hi
	}
	// Invariant: Hits(lo) < x ≤ Hits(hi).
	t := lo
	for hi-lo > 1 {
		m := lo + (hi-lo)/2
		if r := p.Rate(t); r > 0 {
			step := (x - p.Hits(t)) / r * 1e9
			if !math.IsNaN(step) && math.Abs(step) < float64(hi-lo) {
				if n := t + time.Duration(math.Round(step)); n > lo && n < hi {
					m = n
				}
			}
		}
		if p.Hits(m) >= x {
			hi = m
			if hi-lo > 1 && p.Hits(m-1) < x { // Newton landed on the answer
				lo = m - 1
			}
		} else {
			lo = m
			if hi-lo > 1 && p.Hits(m+1) >= x {
				hi = m + 1
			}
		}
		t = m
	}
	return hi
}

// IntendedTimes yields the intended time of every operation of p, in order
// (see Pacer).
func IntendedTimes(p Pattern) iter.Seq[time.Duration] {
	return func(yield func(time.Duration) bool) {
		pc := NewPacer(p)
		for {
			t, ok := pc.Next()
			if !ok || !yield(t) {
				return
			}
		}
	}
}

// Count is the number of operations p intends over its whole duration:
// ⌊Hits(Duration)⌋, or for Poisson arrivals the number its seed draws.
func Count(p Pattern) int64 {
	if ps, ok := p.(*poisson); ok {
		return int64(ps.Hits(ps.Duration()))
	}
	return int64(math.Floor(p.Hits(p.Duration()) + hitsSlack))
}

// poisson is a Poisson arrival process whose intensity follows a base
// pattern: unit-rate exponential gaps from a seeded PRNG, mapped through the
// inverse of the base's Hits (time rescaling), so the expected count in any
// interval is the base's and the sequence is the same for the same seed.
type poisson struct {
	base Pattern
	seed int64
}

// Poisson returns Poisson arrivals whose mean rate follows base (e.g. a
// Constant for a homogeneous process), deterministic for a seed.
func Poisson(base Pattern, seed int64) (Pattern, error) {
	if base == nil {
		return nil, fmt.Errorf("poisson needs a base pattern")
	}
	if _, ok := base.(*poisson); ok {
		return nil, fmt.Errorf("poisson of poisson arrivals is not supported")
	}
	return &poisson{base: base, seed: seed}, nil
}

func (p *poisson) newRand() *rand.Rand {
	return rand.New(rand.NewPCG(uint64(p.seed), 0x9e3779b97f4a7c15))
}

func (p *poisson) Rate(t time.Duration) float64 { return p.base.Rate(t) }
func (p *poisson) Duration() time.Duration      { return p.base.Duration() }
func (p *poisson) String() string {
	return fmt.Sprintf("poisson arrivals (seed %d) at %s", p.seed, p.base)
}

// Hits is the number of arrivals in [0, t]. It replays the seeded sequence,
// so it costs O(arrivals); the Pacer does not call it.
func (p *poisson) Hits(t time.Duration) float64 {
	var n float64
	for it := range IntendedTimes(p) {
		if it > t {
			break
		}
		n++
	}
	return n
}
