// Package schedule is relaybench's open-loop load generator. A Pattern says
// how many operations are intended by each instant of a run; a Pacer turns it
// into the intended send time of every operation, computed in closed form from
// the run's start (never accumulated per operation); Run sends each operation
// at its intended time from a fixed pool of workers, whatever the relay's
// speed, and measures latency from the intended time (no coordinated
// omission) alongside the uncorrected send→reply latency. Operations the pool
// cannot start in time are counted as dropped, never silently skipped.
//
// Timing. Runtime timers on Linux wake up to ~1 ms late (the netpoller
// waits in whole milliseconds), so the dispatcher uses them only until 2 ms
// before an intended time and then nanosleeps with a 1 ns timer slack
// (~20 µs overshoot). It never busy-waits (the relay under test shares the
// CPUs): it sleeps at least Config.MinSleep (50 µs) and then sends every op
// that has come due,
// so at high rates ops go out in small batches. How late each op actually
// started is measured (Result.Lateness, and the dispatcher's share in
// Result.DispatchLateness); a run whose lateness p99 exceeds OnTime, or that
// dropped ops, is marked ClientLimited with the reason.
package schedule

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/relaybench/relaybench/internal/numfmt"
)

// Pattern is a rate pattern: the intended rate of operations over a run.
type Pattern interface {
	// Rate is the intended rate (ops/s) at elapsed time t.
	Rate(t time.Duration) float64
	// Hits is the exact number of operations intended in [0, t] (the
	// integral of Rate), so that intended times are computed in closed form
	// from the run's start, never accumulated per operation.
	Hits(t time.Duration) float64
	// Duration is the length of the run.
	Duration() time.Duration
	// String describes the pattern, e.g. "ramp 0→100/s over 10s".
	String() string
}

// inverter is implemented by patterns whose Hits can be inverted in closed
// form: invert returns the smallest t (seconds) with Hits(t) ≥ x, for
// 0 < x ≤ Hits(Duration).
type inverter interface {
	invert(x float64) float64
}

// seg is one piece of a piecewise-linear rate: the rate goes linearly from
// `from` at `start` to `to` at `end` (seconds); before is Hits(start).
type seg struct {
	start, end float64
	from, to   float64
	before     float64
}

func (s seg) slope() float64 { return (s.to - s.from) / (s.end - s.start) }

// area is the number of hits in [start, start+u].
func (s seg) area(u float64) float64 { return s.from*u + s.slope()*u*u/2 }

// piecewise is a rate made of linear pieces: constant, ramp, step, spike and
// burst are all built from it, so Hits and its inverse are exact and closed
// form (a quadratic per piece).
type piecewise struct {
	desc  string
	d     time.Duration
	segs  []seg
	total float64
}

// piece describes one linear piece of a piecewise pattern.
type piece struct {
	d        time.Duration
	from, to float64
}

func newPiecewise(desc string, pieces []piece) *piecewise {
	p := &piecewise{desc: desc}
	var start float64
	for _, pc := range pieces {
		p.d += pc.d
		if pc.d <= 0 {
			continue
		}
		s := seg{start: start, end: p.d.Seconds(), from: pc.from, to: pc.to, before: p.total}
		p.total += s.area(s.end - s.start)
		p.segs = append(p.segs, s)
		start = s.end
	}
	return p
}

func (p *piecewise) Duration() time.Duration { return p.d }
func (p *piecewise) String() string          { return p.desc }

// find returns the index of the piece containing ts (seconds), 0 ≤ ts < end.
func (p *piecewise) find(ts float64) int {
	i := sort.Search(len(p.segs), func(i int) bool { return p.segs[i].end > ts })
	if i == len(p.segs) {
		i--
	}
	return i
}

func (p *piecewise) Rate(t time.Duration) float64 {
	if t < 0 || t > p.d || len(p.segs) == 0 {
		return 0
	}
	ts := t.Seconds()
	s := p.segs[p.find(ts)]
	u := math.Min(ts-s.start, s.end-s.start)
	return s.from + s.slope()*u
}

func (p *piecewise) Hits(t time.Duration) float64 {
	if t <= 0 || len(p.segs) == 0 {
		return 0
	}
	if t >= p.d {
		return p.total
	}
	ts := t.Seconds()
	s := p.segs[p.find(ts)]
	return s.before + s.area(ts-s.start)
}

func (p *piecewise) invert(x float64) float64 {
	if x <= 0 || len(p.segs) == 0 {
		return 0
	}
	// The first piece whose cumulative hits at its end reach x.
	i := sort.Search(len(p.segs), func(i int) bool {
		s := p.segs[i]
		return s.before+s.area(s.end-s.start) >= x
	})
	if i == len(p.segs) {
		return p.d.Seconds()
	}
	s := p.segs[i]
	c := x - s.before // solve from·u + slope/2·u² = c, u ≥ 0
	a := s.slope() / 2
	disc := s.from*s.from + 4*a*c
	if disc < 0 {
		disc = 0
	}
	den := s.from + math.Sqrt(disc)
	var u float64
	if den > 0 {
		u = 2 * c / den // stable form of (-from + √disc) / 2a, also for a = 0
	}
	return s.start + math.Min(math.Max(u, 0), s.end-s.start)
}

func checkRate(name string, r float64) error {
	if math.IsNaN(r) || math.IsInf(r, 0) || r < 0 {
		return fmt.Errorf("%s rate must be a finite number ≥ 0, got %v", name, r)
	}
	return nil
}

func checkDur(name string, d time.Duration) error {
	if d <= 0 {
		return fmt.Errorf("%s must be positive, got %v", name, d)
	}
	return nil
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func rate(r float64) string { return num(r) + "/s" }

// dur is a duration in a pattern's description as every duration is
// printed for a reader (numfmt.Dur: "5.00s", "60.0s", "16.7min"), where
// Go's form read "1m0s" beside a summary's "Duration: 60.0s". The
// description is also the phase's "pattern" parameter in the results
// file, which nothing compares (A/B and merge compare the run's
// parameters, whose "duration" keeps the flag's form).
func dur(d time.Duration) string { return numfmt.Dur(d) }

// num is r as the summary prints numbers: thousands grouped, no exponent,
// its fraction (if any) as given (1,500, 2.5, 1,000,000).
func num(r float64) string {
	s := strconv.FormatFloat(r, 'f', -1, 64)
	whole, frac, _ := strings.Cut(s, ".")
	n, err := strconv.ParseInt(whole, 10, 64)
	if err != nil {
		return s
	}
	if frac != "" {
		frac = "." + frac
	}
	return numfmt.Group(n) + frac
}

// Constant intends rate ops/s for d.
func Constant(r float64, d time.Duration) (Pattern, error) {
	if err := firstErr(checkRate("constant", r), checkDur("duration", d)); err != nil {
		return nil, err
	}
	return newPiecewise(fmt.Sprintf("constant %s for %s", rate(r), dur(d)), []piece{{d, r, r}}), nil
}

// Ramp goes linearly from `from` to `to` ops/s over d (either direction).
func Ramp(from, to float64, d time.Duration) (Pattern, error) {
	if err := firstErr(checkRate("ramp start", from), checkRate("ramp end", to), checkDur("duration", d)); err != nil {
		return nil, err
	}
	return newPiecewise(fmt.Sprintf("ramp %s→%s over %s", num(from), rate(to), dur(d)), []piece{{d, from, to}}), nil
}

// Step holds `steps` evenly spaced levels from `from` to `to` ops/s, each for
// d/steps (the last one absorbs the rounding).
func Step(from, to float64, steps int, d time.Duration) (Pattern, error) {
	if err := firstErr(checkRate("step start", from), checkRate("step end", to), checkDur("duration", d)); err != nil {
		return nil, err
	}
	if steps < 1 || d/time.Duration(steps) <= 0 {
		return nil, fmt.Errorf("steps must be between 1 and the duration in ns, got %d", steps)
	}
	each := d / time.Duration(steps)
	pieces := make([]piece, steps)
	for i := range pieces {
		r := from
		if steps > 1 {
			r = from + (to-from)*float64(i)/float64(steps-1)
		}
		pieces[i] = piece{each, r, r}
	}
	pieces[steps-1].d = d - each*time.Duration(steps-1)
	return newPiecewise(fmt.Sprintf("step %s→%s in %d steps of %s", num(from), rate(to), steps, dur(each)), pieces), nil
}

// Spike holds base ops/s for d except during [at, at+width), where it holds
// peak.
func Spike(base, peak float64, at, width, d time.Duration) (Pattern, error) {
	if err := firstErr(checkRate("base", base), checkRate("peak", peak), checkDur("duration", d), checkDur("spike width", width)); err != nil {
		return nil, err
	}
	if at < 0 || at+width > d {
		return nil, fmt.Errorf("spike [%v, %v) must lie within the duration %v", at, at+width, d)
	}
	return newPiecewise(fmt.Sprintf("spike %s, %s at %s for %s, over %s", rate(base), rate(peak), dur(at), dur(width), dur(d)),
		[]piece{{at, base, base}, {width, peak, peak}, {d - at - width, base, base}}), nil
}

// Burst holds base ops/s, and peak ops/s during the last `width` of every
// `every` (so each burst adds (peak-base)·width operations); the run ends
// after d, possibly inside a period.
func Burst(base, peak float64, every, width, d time.Duration) (Pattern, error) {
	if err := firstErr(checkRate("base", base), checkRate("peak", peak), checkDur("duration", d), checkDur("burst period", every), checkDur("burst width", width)); err != nil {
		return nil, err
	}
	if width > every {
		return nil, fmt.Errorf("burst width %v must not exceed its period %v", width, every)
	}
	var pieces []piece
	for t := time.Duration(0); t < d; t += every {
		quiet := min(every-width, d-t)
		pieces = append(pieces, piece{quiet, base, base})
		if loud := min(width, d-t-quiet); loud > 0 {
			pieces = append(pieces, piece{loud, peak, peak})
		}
	}
	return newPiecewise(fmt.Sprintf("burst %s, %s for %s every %s, over %s", rate(base), rate(peak), dur(width), dur(every), dur(d)), pieces), nil
}

// sine oscillates between base and peak: Rate(t) = mid − amp·cos(2πt/P), so
// it starts at base, peaks at P/2 and averages (base+peak)/2 over whole
// periods.
type sine struct {
	base, peak float64
	period, d  time.Duration
}

// Sine oscillates between base and peak ops/s with the given period, starting
// at base, for d.
func Sine(base, peak float64, period, d time.Duration) (Pattern, error) {
	if err := firstErr(checkRate("base", base), checkRate("peak", peak), checkDur("duration", d), checkDur("sine period", period)); err != nil {
		return nil, err
	}
	if peak < base {
		return nil, fmt.Errorf("sine peak %g must be ≥ base %g", peak, base)
	}
	return &sine{base, peak, period, d}, nil
}

func (s *sine) Duration() time.Duration { return s.d }
func (s *sine) String() string {
	return fmt.Sprintf("sine %s↔%s, period %s, over %s", num(s.base), rate(s.peak), dur(s.period), dur(s.d))
}

func (s *sine) Rate(t time.Duration) float64 {
	if t < 0 || t > s.d {
		return 0
	}
	mid, amp := (s.base+s.peak)/2, (s.peak-s.base)/2
	return mid - amp*math.Cos(2*math.Pi*t.Seconds()/s.period.Seconds())
}

func (s *sine) Hits(t time.Duration) float64 {
	t = min(max(t, 0), s.d)
	mid, amp := (s.base+s.peak)/2, (s.peak-s.base)/2
	ts, ps := t.Seconds(), s.period.Seconds()
	return mid*ts - amp*ps/(2*math.Pi)*math.Sin(2*math.Pi*ts/ps)
}
