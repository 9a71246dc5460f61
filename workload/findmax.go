package workload

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/relaybench/relaybench/corpus"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/schedule"
)

// FindMaxOptions configure FindMax.
type FindMaxOptions struct {
	// Load is the template of every step: Pool, Connections, MaxLateness,
	// Timeout, Size, MaxEvents, Dial, Begin. Kind is publish; Pattern,
	// Name and Warmup are set per step.
	Load         LoadOptions
	StartRate    float64       // first step's rate (default 1000/s)
	MaxRate      float64       // never offer more (default 1,000,000/s)
	StepDuration time.Duration // length of each step (default 10 s)
	Warmup       time.Duration // start of each step left out of latency (default min(2 s, StepDuration/5))
	P99          time.Duration // latency target: corrected OK p99 (default 50 ms)
	MaxDrops     int64         // most ops a passing step may drop (default 0)
	MaxRefusals  int64         // most refusals a passing step may get (default 0)
	Precision    float64       // stop bisecting when (fail − pass)/pass ≤ this (default 0.05)
	MaxSteps     int           // safety bound on steps (default 25)
	Progress     io.Writer     // one line per step; nil: none
	// Check, when set, is called before each step; an error (the relay
	// died) ends the search with that error.
	Check func() error
}

func (o *FindMaxOptions) defaults() error {
	var errs []error
	if o.StartRate < 0 || o.MaxRate < 0 || math.IsNaN(o.StartRate) || math.IsNaN(o.MaxRate) {
		errs = append(errs, fmt.Errorf("--start-rate/--max-rate: must be positive, got %v and %v", o.StartRate, o.MaxRate))
	}
	if o.StartRate == 0 {
		o.StartRate = 1000
	}
	if o.MaxRate == 0 {
		o.MaxRate = 1_000_000
	}
	if o.StartRate > o.MaxRate {
		errs = append(errs, fmt.Errorf("--start-rate %g: above --max-rate %g", o.StartRate, o.MaxRate))
	}
	if o.StepDuration < 0 {
		errs = append(errs, fmt.Errorf("--step-duration: must be positive, got %v", o.StepDuration))
	}
	if o.StepDuration == 0 {
		o.StepDuration = 10 * time.Second
	}
	if o.Warmup < 0 || (o.Warmup > 0 && o.Warmup >= o.StepDuration) {
		errs = append(errs, fmt.Errorf("--load-warmup %v: must be ≥ 0 and shorter than --step-duration %v", o.Warmup, o.StepDuration))
	}
	if o.Warmup == 0 {
		o.Warmup = min(2*time.Second, o.StepDuration/5)
	}
	if o.P99 < 0 {
		errs = append(errs, fmt.Errorf("--p99: must be positive, got %v", o.P99))
	}
	if o.P99 == 0 {
		o.P99 = 50 * time.Millisecond
	}
	if o.MaxDrops < 0 || o.MaxRefusals < 0 {
		errs = append(errs, fmt.Errorf("--max-drops/--max-refusals: must be ≥ 0, got %d and %d", o.MaxDrops, o.MaxRefusals))
	}
	if o.Precision < 0 || o.Precision >= 1 {
		errs = append(errs, fmt.Errorf("--precision: want a fraction in (0, 1), got %v", o.Precision))
	}
	if o.Precision == 0 {
		o.Precision = 0.05
	}
	if o.MaxSteps <= 0 {
		o.MaxSteps = 25
	}
	o.Load.Kind = LoadPublish
	return errors.Join(errs...)
}

// Step is one constant-rate step of a search.
type Step struct {
	Rate  float64
	Phase results.Phase
	Pass  bool
	// Why the step failed ("" when it passed), and whether the client, not
	// the relay, explains the failure.
	Why           string
	ClientLimited bool
}

// FindMaxResult is the outcome of a search.
type FindMaxResult struct {
	Max           float64 // highest passing rate (0: none passed)
	FirstFail     float64 // lowest failing rate (0: none failed)
	ClientLimited bool    // the search stopped because the client was the limit: Max is a lower bound
	Capped        bool    // Max reached MaxRate: a lower bound too
	Answer        string  // one line: "12,000 events/s", "≥ 40,000 events/s (client-limited)", …
	Steps         []Step
}

// FindMax searches for the highest constant publish rate the relay sustains
// within the latency target (corrected OK p99 ≤ P99, at most MaxDrops
// dropped, MaxRefusals refused, none failed), each step a fresh constant
// phase of StepDuration with its warm-up excluded: it starts at StartRate,
// doubles until a step fails, then bisects until the bounds are within
// Precision. A failing step the client explains (its lateness, its CPU, or
// too small a pool) ends the search: the answer is then "≥ R
// (client-limited)", never a relay figure. The phase has one Group per step
// and a table in its Notes; the error is the context's or a setup error.
func FindMax(ctx context.Context, url string, c *corpus.Corpus, o FindMaxOptions) (results.Phase, *FindMaxResult, error) {
	ph := results.Phase{Name: "find-max", Workload: "find-max"}
	if err := o.defaults(); err != nil {
		return ph, nil, err
	}
	res := &FindMaxResult{}
	var stopWhy string
	run := func(rate float64) (Step, error) {
		if o.Check != nil {
			if err := o.Check(); err != nil {
				return Step{}, fmt.Errorf("before the %s/s step: %w", fmtRate(rate), err)
			}
		}
		p, err := schedule.Constant(rate, o.StepDuration)
		if err != nil {
			return Step{}, err
		}
		lo := o.Load
		lo.Name = fmt.Sprintf("find-max/%.0f", rate)
		lo.Pattern, lo.Warmup = p, o.Warmup
		if lo.Drain == 0 {
			lo.Drain = max(lo.Timeout, time.Second)
		}
		if n, err := lo.EventsNeeded(); err == nil && lo.MaxEvents > 0 && n > int64(lo.MaxEvents) {
			return Step{}, errEventCap{n: n, max: lo.MaxEvents}
		}
		sp, err := Load(ctx, url, c, lo)
		st := Step{Rate: rate, Phase: sp}
		if err != nil {
			return st, err
		}
		st.Pass, st.Why, st.ClientLimited = judgeStep(sp, o)
		res.Steps = append(res.Steps, st)
		if o.Progress != nil {
			verdict := "pass"
			if !st.Pass {
				verdict = "FAIL: " + st.Why
			}
			fmt.Fprintf(o.Progress, "find-max: %s/s → %s\n", fmtRate(rate), verdict)
		}
		return st, nil
	}
	stop := func(err error) bool {
		var ec errEventCap
		if errors.As(err, &ec) {
			stopWhy = fmt.Sprintf("stopped: the next step would need %d events, above -load-max-events %d", ec.n, ec.max)
			res.ClientLimited = true
			return true
		}
		return false
	}

	var err error
	rate := o.StartRate
	lo, hi := 0.0, math.Inf(1)
	// Double until a step fails (or the cap passes).
	for len(res.Steps) < o.MaxSteps {
		var st Step
		st, err = run(rate)
		if err != nil {
			break
		}
		if !st.Pass {
			hi = rate
			if st.ClientLimited {
				res.ClientLimited = true
				stopWhy = fmt.Sprintf("stopped at %s/s: %s — the client, not the relay, was the limit", fmtRate(rate), st.Why)
			}
			break
		}
		lo = rate
		if rate >= o.MaxRate {
			res.Capped = true
			break
		}
		rate = min(rate*2, o.MaxRate)
	}
	// Bisect between the highest pass and the lowest failure (from 0 when
	// even the first step failed).
	for err == nil && !res.ClientLimited && !res.Capped && !math.IsInf(hi, 1) && len(res.Steps) < o.MaxSteps {
		if lo > 0 && (hi-lo)/lo <= o.Precision {
			break
		}
		if lo == 0 && hi < 1 {
			break // nothing passes even at 1/s
		}
		mid := (lo + hi) / 2
		if lo > 0 {
			mid = math.Round(mid) // whole ops/s: a table a reader can use
		}
		var st Step
		st, err = run(mid)
		if err != nil {
			break
		}
		if st.Pass {
			lo = mid
		} else {
			hi = mid
			if st.ClientLimited {
				res.ClientLimited = true
				stopWhy = fmt.Sprintf("stopped at %s/s: %s — the client, not the relay, was the limit", fmtRate(mid), st.Why)
			}
		}
	}
	if err != nil && stop(err) {
		err = nil
	}
	res.Max = lo
	if !math.IsInf(hi, 1) {
		res.FirstFail = hi
	}
	switch {
	case res.Max == 0:
		res.Answer = "no rate passed"
		if res.ClientLimited {
			res.Answer += " (client-limited: see the notes)"
		}
	case res.ClientLimited:
		res.Answer = fmt.Sprintf("≥ %s events/s (client-limited)", fmtRate(res.Max))
	case res.Capped:
		res.Answer = fmt.Sprintf("≥ %s events/s (the --max-rate cap)", fmtRate(res.Max))
	case res.FirstFail == 0:
		res.Answer = fmt.Sprintf("≥ %s events/s (step limit reached)", fmtRate(res.Max))
	default:
		res.Answer = fmt.Sprintf("%s events/s (%s/s failed)", fmtRate(res.Max), fmtRate(res.FirstFail))
	}
	buildFindMaxPhase(&ph, res, o, stopWhy)
	if err == nil {
		err = ctx.Err()
	}
	return ph, res, err
}

type errEventCap struct {
	n   int64
	max int
}

func (e errEventCap) Error() string {
	return fmt.Sprintf("-load-max-events: the step needs %d events, above the cap of %d", e.n, e.max)
}

// judgeStep decides whether a step passed and, if not, whether the relay
// or the client explains it. The relay failed when its own reply time
// (uncorrected p99) misses the target, it refused or lost ops, or ops were
// dropped with every in-flight slot waiting for it while the client had
// CPU to spare. The client explains a failure when its CPU was saturated,
// its dispatcher was late, or its lateness alone makes the difference, or
// the pool was too small for the rate (Little's law), which is a limit of
// the tool's configuration, not of the relay.
func judgeStep(ph results.Phase, o FindMaxOptions) (pass bool, why string, client bool) {
	c := ph.Counts
	var whys []string
	p99 := int64(0)
	if h := ph.Latency["ok"]; h != nil {
		p99 = h.Percentiles["99"]
	}
	unc := int64(0)
	if h := ph.Latency["ok_uncorrected"]; h != nil {
		unc = h.Percentiles["99"]
	}
	target := int64(o.P99)
	relay := false
	if p99 > target {
		whys = append(whys, fmt.Sprintf("p99 %v > %v", roundLat(time.Duration(p99)), o.P99))
		if unc > target {
			relay = true
		}
	}
	if c["dropped"] > o.MaxDrops {
		whys = append(whys, fmt.Sprintf("%d dropped", c["dropped"]))
	}
	if c["refused"] > o.MaxRefusals {
		whys = append(whys, fmt.Sprintf("%d refused", c["refused"]))
		relay = true
	}
	if n := c["failed"] + c["unfinished"]; n > 0 {
		whys = append(whys, fmt.Sprintf("%d without a reply", n))
		relay = true
	}
	if len(whys) == 0 {
		return true, "", false
	}
	why = strings.Join(whys, ", ")
	if relay {
		return false, why, false
	}
	// Lateness or drops only: whose?
	pool := int64(o.Load.Pool)
	if pool == 0 {
		pool = schedule.DefaultPool
	}
	notes := strings.Join(ph.Notes, "\n")
	switch {
	case ph.ClientLimited:
		return false, why + " (" + firstMatch(notes, "client-limited") + ")", true
	case strings.Contains(notes, "relay-limited"):
		// Pool full while the client had spare CPU: is the pool simply too
		// small for this rate at the relay's on-target reply time?
		rate := float64(c["intended"]) / (float64(ph.Duration) / 1e9)
		mean := 0.0
		if h := ph.Latency["ok_uncorrected"]; h != nil {
			mean = h.Mean
		}
		if need := rate * mean / 1e9; unc <= target && need >= 0.8*float64(pool) {
			return false, why + fmt.Sprintf(" (the pool of %d is too small: %.0f/s at %v per reply needs ~%.0f in flight; raise --load-pool)",
				pool, rate, roundLat(time.Duration(mean)), need), true
		}
		return false, why, false
	default:
		return false, why, false
	}
}

func firstMatch(notes, prefix string) string {
	for _, l := range strings.Split(notes, "\n") {
		if strings.HasPrefix(l, prefix) {
			if i := strings.IndexByte(l, '('); i > 0 && len(l) > 160 {
				return strings.TrimSpace(l[:i])
			}
			return l
		}
	}
	return prefix
}

// fmtRate formats a rate with thousands separators, no decimals unless < 10.
func fmtRate(r float64) string {
	if r < 10 && r != math.Trunc(r) {
		return fmt.Sprintf("%.2f", r)
	}
	n := int64(math.Round(r))
	s := fmt.Sprint(n)
	var b strings.Builder
	for i, ch := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(ch)
	}
	return b.String()
}

// buildFindMaxPhase fills the summary phase: one Group per step (in the
// order run), the curve as a table in Notes, the answer.
func buildFindMaxPhase(ph *results.Phase, res *FindMaxResult, o FindMaxOptions, stopWhy string) {
	ph.Params = map[string]any{
		"start_rate": o.StartRate, "max_rate": o.MaxRate, "step_duration": o.StepDuration.String(),
		"warmup": o.Warmup.String(), "p99_target": o.P99.String(), "max_drops": o.MaxDrops,
		"max_refusals": o.MaxRefusals, "precision": o.Precision, "pool": o.Load.Pool,
		"connections": o.Load.Connections, "size": o.Load.Size,
	}
	ph.Counts = map[string]int64{"steps": int64(len(res.Steps))}
	ph.Rates = map[string]float64{"max_rate": res.Max}
	if res.FirstFail > 0 {
		ph.Rates["first_failing_rate"] = res.FirstFail
	}
	ph.ClientLimited = res.ClientLimited
	table := []string{
		fmt.Sprintf("find-max: %s (target: corrected OK p99 ≤ %v, ≤ %d dropped, ≤ %d refused, none failed; %v steps, first %v excluded)",
			res.Answer, o.P99, o.MaxDrops, o.MaxRefusals, o.StepDuration, o.Warmup),
		"| offered/s | achieved/s | p50 | p99 | p99 uncorrected | lateness p99 | dropped | refused | failed | client cores | relay cores | verdict |",
		"|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
	}
	for i, st := range res.Steps {
		sp := st.Phase
		if i == 0 {
			ph.Start = sp.Start
		}
		ph.Duration += sp.Duration
		secs := float64(sp.Duration) / 1e9
		g := results.Group{
			Name:    fmt.Sprintf("%s/s", fmtRate(st.Rate)),
			Counts:  map[string]int64{},
			Rates:   map[string]float64{"offered_per_sec": st.Rate},
			Latency: map[string]*results.Histogram{},
		}
		for _, k := range []string{"intended", "sent", "accepted", "refused", "dropped", "failed", "unfinished"} {
			g.Counts[k] = sp.Counts[k]
		}
		g.Counts["pass"] = 0
		if st.Pass {
			g.Counts["pass"] = 1
		}
		if st.ClientLimited {
			g.Counts["client_limited"] = 1
		}
		for _, k := range []string{"ok", "ok_uncorrected", "lateness"} {
			if h := sp.Latency[k]; h != nil {
				g.Latency[k] = h
			}
		}
		var clientCores, relayCores float64
		if secs > 0 {
			g.Rates["achieved_per_sec"] = float64(sp.Counts["accepted"]) / secs
			if r := sp.Resources; r != nil {
				clientCores = r.ClientCPUSecs / secs
				relayCores = r.RelayCPUSecs / secs
				g.Rates["client_cpu_cores"] = clientCores
				if r.RelayCPUSecs > 0 {
					g.Rates["relay_cpu_cores"] = relayCores
				}
			}
		}
		ph.Groups = append(ph.Groups, g)
		q := func(k, p string) string {
			if h := sp.Latency[k]; h != nil && h.Count > 0 {
				return roundLat(time.Duration(h.Percentiles[p])).String()
			}
			return "–"
		}
		verdict := "pass"
		if !st.Pass {
			verdict = "fail: " + st.Why
			if st.ClientLimited {
				verdict = "client-limited: " + st.Why
			}
		}
		relayStr := "–"
		if relayCores > 0 {
			relayStr = fmt.Sprintf("%.2f", relayCores)
		}
		table = append(table, fmt.Sprintf("| %s | %s | %s | %s | %s | %s | %d | %d | %d | %.2f | %s | %s |",
			fmtRate(st.Rate), fmtRate(g.Rates["achieved_per_sec"]), q("ok", "50"), q("ok", "99"), q("ok_uncorrected", "99"),
			q("lateness", "99"), sp.Counts["dropped"], sp.Counts["refused"], sp.Counts["failed"]+sp.Counts["unfinished"],
			clientCores, relayStr, verdict))
	}
	ph.Notes = append(ph.Notes, table...)
	if stopWhy != "" {
		ph.Notes = append(ph.Notes, stopWhy)
	}
	if res.ClientLimited {
		ph.Notes = append(ph.Notes, "client-limited: the answer is a lower bound on the relay's capacity, not a relay figure; give the client more CPU (--client-cpus/--relay-cpus on separate cores) or a bigger --load-pool")
	}
}
