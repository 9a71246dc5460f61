package workload

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/relaybench/relaybench/corpus"
	"github.com/relaybench/relaybench/internal/numfmt"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/schedule"
	"github.com/relaybench/relaybench/verify"
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
	// Why the step failed ("" when it passed), and whether the relay is not
	// shown to be the limit: the client, its pool or the machine explains
	// the failure.
	Why           string
	ClientLimited bool
	// Machine is the machine's load (sysinfo.OthersBusy's clause) when
	// other processes competing for its cores explain the failure (the
	// step is then ClientLimited too): late from outside the client's own
	// work, or the relay's replies slow while it may have waited for a CPU
	// (RelayOrMachine).
	Machine string
	// RelayOrMachine says the relay's replies kept the step's pool full on
	// such a machine: the relay may have been slow, or starved of a CPU
	// (load's WhyMachineDrop); a step with Machine and not this was late
	// from outside the client's own work (load's WhyClientDrop).
	RelayOrMachine bool
}

// FindMaxResult is the outcome of a search.
type FindMaxResult struct {
	// Cut is the step the user interrupted (Ctrl-C): not judged, its work
	// is cancelled in the phase's account; nil when none was.
	Cut *Step
	// Aborted is why the search stopped because the relay made no progress
	// in a step ("" when it did not).
	Aborted       string
	Max           float64 // highest passing rate (0: none passed)
	FirstFail     float64 // lowest failing rate (0: none failed)
	ClientLimited bool    // the search stopped because the client (or the machine: MachineBusy) was the limit: Max is a lower bound
	MachineBusy   string  // the machine's load when other processes competing for its cores stopped the search ("" when not)
	Capped        bool    // Max reached MaxRate: a lower bound too
	// Unbisected says --max-steps ended the search before it bisected to
	// Precision: the relay's figure lies between Max and FirstFail, and
	// Max is only the last rate that passed.
	Unbisected bool
	Answer     string // one line: "12,000 events/s", "≥ 40,000 events/s (client-limited)", …
	Steps      []Step
}

// FindMax searches for the highest constant publish rate the relay sustains
// within the latency target (corrected OK p99 ≤ P99, at most MaxDrops
// dropped, MaxRefusals refused, none failed), each step a fresh constant
// phase of StepDuration with its warm-up excluded: it starts at StartRate,
// doubles until a step fails, then bisects until the bounds are within
// Precision. A failing step the client explains (its lateness, its CPU, or
// too small a pool) ends the search: the answer is then "≥ R
// (client-limited)", never a relay figure; so does one that other
// processes competing for the machine's cores explain ("≥ R (machine
// busy: …)"). Such a search did not find the relay's figure: the judge
// gives it load's status for the step that stopped it (judge.ClientShort,
// judge.Phase: the client's or late from outside, error; the relay's
// replies on a busy machine, relay_or_machine in its group, incomplete).
// The phase has one Group per step and a table in its Notes; the error is
// the context's or a setup error.
func FindMax(ctx context.Context, url string, c *corpus.Corpus, o FindMaxOptions) (results.Phase, *FindMaxResult, error) {
	if err := o.defaults(); err != nil {
		return results.Phase{}, nil, err
	}
	ph := results.NewPhase("find-max", "find-max")
	s := &maxSearch{ctx: ctx, url: url, c: c, o: o, res: &FindMaxResult{}, hi: math.Inf(1)}
	err := s.double()
	if err == nil {
		err = s.bisect()
	}
	if err != nil && s.stop(err) {
		err = nil
	}
	res := s.res
	res.Max = s.lo
	if !math.IsInf(s.hi, 1) {
		res.FirstFail = s.hi
	}
	res.Unbisected = unbisected(res, o.Precision)
	res.Answer = findMaxAnswer(res, o.Precision)
	buildFindMaxPhase(&ph, res, o, s.stopWhy)
	if err == nil {
		err = ctx.Err()
	}
	return ph, res, err
}

// maxSearch is one find-max search: the bounds so far and the steps run.
type maxSearch struct {
	ctx     context.Context
	url     string
	c       *corpus.Corpus
	o       FindMaxOptions
	res     *FindMaxResult
	lo, hi  float64 // highest pass, lowest failure
	stopWhy string
}

// double runs steps from StartRate, doubling until one fails (or the cap
// passes).
func (s *maxSearch) double() error {
	rate := s.o.StartRate
	for len(s.res.Steps) < s.o.MaxSteps {
		st, err := s.step(rate)
		if err != nil {
			return err
		}
		if !st.Pass {
			s.fail(st)
			return nil
		}
		s.lo = rate
		if rate >= s.o.MaxRate {
			s.res.Capped = true
			return nil
		}
		rate = min(rate*2, s.o.MaxRate)
	}
	return nil
}

// bisect runs steps between the highest pass and the lowest failure (from
// 0 when even the first step failed) until they are within Precision.
func (s *maxSearch) bisect() error {
	for !s.res.ClientLimited && !s.res.Capped && !math.IsInf(s.hi, 1) && len(s.res.Steps) < s.o.MaxSteps {
		if s.lo > 0 && (s.hi-s.lo)/s.lo <= s.o.Precision {
			return nil
		}
		if s.lo == 0 && s.hi < 1 {
			return nil // nothing passes even at 1/s
		}
		mid := (s.lo + s.hi) / 2
		if s.lo > 0 {
			mid = math.Round(mid) // whole ops/s: a table a reader can use
		}
		st, err := s.step(mid)
		if err != nil {
			return err
		}
		if st.Pass {
			s.lo = mid
		} else {
			s.fail(st)
		}
	}
	return nil
}

// fail records a failing step: the new upper bound, and the end of the
// search when the client explains the failure.
func (s *maxSearch) fail(st Step) {
	s.hi = st.Rate
	switch {
	case st.Machine != "":
		s.res.ClientLimited, s.res.MachineBusy = true, st.Machine
		s.stopWhy = fmt.Sprintf("stopped at %s/s: %s — other processes competed for the machine's cores, so this step is no relay figure", fmtRate(st.Rate), st.Why)
	case st.ClientLimited:
		s.res.ClientLimited = true
		s.stopWhy = fmt.Sprintf("stopped at %s/s: %s — the client, not the relay, was the limit", fmtRate(st.Rate), st.Why)
	}
}

// step runs and judges one constant step. A step the user interrupted is
// kept apart (Cut), never judged; one the relay stalled ends the search.
func (s *maxSearch) step(rate float64) (Step, error) {
	o := s.o
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
	sp, err := Load(s.ctx, s.url, s.c, lo)
	st := Step{Rate: rate, Phase: sp}
	if err != nil {
		if s.ctx.Err() != nil && sp.Accounts != nil {
			s.res.Cut = &st // interrupted: cancelled, not a failed step
			progressLine(o.Progress, rate, "interrupted")
		}
		return st, err
	}
	v := stepJudge(sp, o)
	st.Pass, st.Why, st.ClientLimited, st.Machine, st.RelayOrMachine = v.pass, v.why, v.client, v.machine, v.relayOrMachine
	s.res.Steps = append(s.res.Steps, st)
	verdict := "pass"
	switch {
	case !st.Pass && st.Machine != "":
		verdict = "FAIL (" + machineBusyWords + "): " + st.Why
	case !st.Pass && st.ClientLimited:
		verdict = "FAIL (client-limited): " + st.Why
	case !st.Pass:
		verdict = "FAIL: " + st.Why
	}
	progressLine(o.Progress, rate, verdict)
	if sp.Aborted != "" {
		s.hi = rate
		s.res.Aborted = fmt.Sprintf("the %s/s step stopped early: %s", fmtRate(rate), sp.Aborted)
		return st, errStepAborted
	}
	return st, nil
}

// stop reports whether err ends the search without being an error (the
// event cap, a stalled relay), and says why.
func (s *maxSearch) stop(err error) bool {
	if errors.Is(err, errStepAborted) {
		s.stopWhy = "stopped: " + s.res.Aborted + "; a relay that answers nothing cannot be searched further"
		return true
	}
	var ec errEventCap
	if errors.As(err, &ec) {
		s.stopWhy = fmt.Sprintf("stopped: the next step would need %d events, above --load-max-events %d", ec.n, ec.max)
		s.res.ClientLimited = true
		return true
	}
	return false
}

// unbisected says whether a search that found a passing and a failing
// rate ended (by --max-steps) before they were within precision, the
// search not stopped otherwise (client-limited, capped, interrupted, the
// relay stalled).
func unbisected(res *FindMaxResult, precision float64) bool {
	if res.ClientLimited || res.Capped || res.Cut != nil || res.Aborted != "" || res.Max <= 0 || res.FirstFail <= res.Max {
		return false
	}
	return (res.FirstFail-res.Max)/res.Max > precision
}

// answer is the search's one-line answer.
func findMaxAnswer(res *FindMaxResult, precision float64) string {
	switch {
	case res.Max == 0:
		a := "no rate passed"
		if res.MachineBusy != "" {
			a += " (" + machineBusyWords + ": see the notes)"
		} else if res.ClientLimited {
			a += " (client-limited: see the notes)"
		}
		if res.Cut != nil {
			a += " (interrupted)"
		}
		return a
	case res.MachineBusy != "":
		return fmt.Sprintf("≥ %s events/s (%s)", fmtRate(res.Max), machineBusyWords)
	case res.ClientLimited:
		return fmt.Sprintf("≥ %s events/s (client-limited)", fmtRate(res.Max))
	case res.Capped:
		return fmt.Sprintf("≥ %s events/s (the --max-rate cap)", fmtRate(res.Max))
	case res.Cut != nil:
		return fmt.Sprintf("≥ %s events/s (interrupted)", fmtRate(res.Max))
	case res.Aborted != "":
		return fmt.Sprintf("≥ %s events/s (the relay stopped answering at %s/s)", fmtRate(res.Max), fmtRate(res.FirstFail))
	case res.FirstFail == 0:
		return fmt.Sprintf("≥ %s events/s (step limit reached)", fmtRate(res.Max))
	case res.Unbisected:
		return fmt.Sprintf("between %s and %s events/s (%s)", fmtRate(res.Max), fmtRate(res.FirstFail), UnbisectedWords(precision))
	}
	return fmt.Sprintf("%s events/s (%s/s failed)", fmtRate(res.Max), fmtRate(res.FirstFail))
}

// UnbisectedWords say why a search's answer is a bracket, not a figure:
// "--max-steps ended the search before it reached --precision 5%".
func UnbisectedWords(precision float64) string {
	return fmt.Sprintf("--max-steps ended the search before it reached --precision %s%%", strconv.FormatFloat(precision*100, 'g', 3, 64))
}

// machineBusyWords qualify a search, or a step, that other processes
// competing for the machine's cores stopped: no relay figure.
const machineBusyWords = "machine busy: other processes competed for its cores"

// errStepAborted ends a search whose step the relay stalled.
var errStepAborted = errors.New("find-max: a step stopped early (no progress)")

func progressLine(w io.Writer, rate float64, verdict string) {
	if w != nil {
		fmt.Fprintf(w, "find-max: %s/s → %s\n", fmtRate(rate), verdict)
	}
}

type errEventCap struct {
	n   int64
	max int
}

func (e errEventCap) Error() string {
	return fmt.Sprintf("--load-max-events: the step needs %d events, above the cap of %d", e.n, e.max)
}

// judgeStep decides whether a step passed and, if not, whether the relay
// is shown to be the limit (client false) or not (client: the client, its
// pool or the machine limited it): judgeSteps without the machine's load.
func judgeStep(ph results.Phase, o FindMaxOptions) (pass bool, why string, client bool) {
	v := judgeSteps(ph, o)
	return v.pass, v.why, v.client
}

// stepVerdict is a step's judgement: passed, or why not and who limited
// it. client says the relay is not shown to be the limit (the search's
// answer is then a lower bound); machine is the machine's load
// (sysinfo.OthersBusy's clause) when other processes competing for the
// cores decided the step; relayOrMachine, that the relay's replies kept
// the pool full there (the relay or the machine), not the client late.
type stepVerdict struct {
	pass           bool
	why, machine   string
	client         bool
	relayOrMachine bool
}

// stepJudge judges each step of a search: judgeSteps (a test gives the
// judgements it needs, none left to the machine's timing).
var stepJudge = judgeSteps

// judgeSteps judges a step, as load's judgement of it says. The relay's
// own answers fail it by evidence: refusals, ops without a reply, a step
// stopped early. A step late or slow only (its p99 over the target, drops)
// is the relay's when load found the client kept up and no other process
// competed for the machine's cores; otherwise stepLimit says whose it was.
func judgeSteps(ph results.Phase, o FindMaxOptions) stepVerdict {
	so := stepOutcomesOf(ph)
	var whys []string
	if p99 := ph.Latency[results.LatencyOK]; p99 != nil && p99.Percentiles["99"] > int64(o.P99) {
		whys = append(whys, fmt.Sprintf("p99 %s > %v", numfmt.Dur(time.Duration(p99.Percentiles["99"])), o.P99)) // as the steps table gives it
	}
	if so.dropped > o.MaxDrops {
		whys = append(whys, numfmt.Group(so.dropped)+" dropped")
	}
	if so.refused > o.MaxRefusals {
		whys = append(whys, numfmt.Group(so.refused)+" refused")
	}
	if so.noReply > 0 {
		whys = append(whys, numfmt.Group(so.noReply)+" without a reply")
	}
	if ph.Aborted != "" {
		whys = append(whys, "stopped early: "+ph.Aborted)
	}
	if len(whys) == 0 {
		return stepVerdict{pass: true}
	}
	why := strings.Join(whys, ", ")
	if so.refused > o.MaxRefusals || so.noReply > 0 || ph.Aborted != "" {
		return stepVerdict{why: why} // the relay's answers
	}
	return stepLimit(ph, o, why)
}

// stepLimit says who limited a step that failed by lateness or slowness
// only (why: its failures), from load's judgement of it. A step whose
// replies alone (the OK p99 from the actual send) missed the target failed
// on the relay's side whatever the client's lateness: the relay's on a
// quiet machine, the relay's or the machine's on a busy one (unless the
// client's own work was in those reply times: clientReadLate). Otherwise
// the lateness made the difference: the client (its
// note, without its "client-limited: "), ending with the machine's load
// when other processes competed for the cores; late from outside the
// client's own work on such a machine (machine: the load); the pool too
// small for the rate (Little's law), a limit of the tool's configuration;
// the relay's replies on a machine busy with other processes (relay or
// machine: the relay may have waited for a CPU, so the step is no relay
// figure: machine); else the relay (client false).
func stepLimit(ph results.Phase, o FindMaxOptions, why string) stepVerdict {
	notes := strings.Join(ph.Notes, "\n")
	busy := busyClause(ph)
	alone := repliesOverTarget(ph, o)
	if ph.ClientLimited && alone != "" && !clientReadLate(notes) {
		// The replies alone missed the target: however late the client
		// sent, the step failed on the relay's side (or the busy machine's).
		if busy != "" {
			return stepVerdict{why: why + " (relay or machine: " + alone + "; " + busy + ")", client: true, machine: busy, relayOrMachine: true}
		}
		return stepVerdict{why: why + " (" + alone + ")"}
	}
	switch {
	case ph.ClientLimited && busy != "" && strings.Contains(notes, LateFromOutside):
		return stepVerdict{why: why + " (late from outside: " + busy + ")", client: true, machine: busy}
	case ph.ClientLimited:
		// The note without its "client-limited: ": the step's verdict names it.
		head := strings.TrimPrefix(firstMatch(notes, "client-limited"), "client-limited: ")
		if busy != "" {
			head += "; " + busy
		}
		return stepVerdict{why: why + " (" + head + ")", client: true}
	}
	if strings.Contains(notes, "relay-limited") || strings.Contains(notes, RelayOrMachine) || strings.Contains(notes, SlotWaitPrefix) {
		if small := poolTooSmall(ph, o); small != "" {
			return stepVerdict{why: why + small, client: true}
		}
	}
	if busy != "" {
		return stepVerdict{why: why + " (relay or machine: " + busy + ")", client: true, machine: busy, relayOrMachine: true}
	}
	return stepVerdict{why: why}
}

// repliesOverTarget says, when the OK p99 from the actual send (the
// relay's replies alone, without the client's lateness) was over the
// target, so ("the replies alone took p99 60.9ms from the actual send,
// over the 50ms target"); "" when they met it (or were not timed): then
// only the lateness can have failed the step.
func repliesOverTarget(ph results.Phase, o FindMaxOptions) string {
	h := ph.Latency["ok_uncorrected"]
	if h == nil || h.Count == 0 || h.Percentiles["99"] <= int64(o.P99) {
		return ""
	}
	return fmt.Sprintf("the replies alone took p99 %s from the actual send, over the %v target", numfmt.Dur(time.Duration(h.Percentiles["99"])), o.P99)
}

// clientReadLate says whether load found the client's own work in its
// reply times: its CPU saturated, or its goroutines waiting for a CPU a
// large part of them (it read the replies late), so a slow reply time is
// no evidence against the relay.
func clientReadLate(notes string) bool {
	return strings.Contains(notes, clientCPUSaturated) || strings.Contains(notes, clientSlowToRead)
}

// poolTooSmall says, for a step whose pool was full while the client had
// spare CPU, whether the pool was simply too small for its rate at the
// relay's on-target reply time (Little's law): a limit of the tool's
// configuration, not of the relay (" (the pool of … is too small …)"; ""
// when not).
func poolTooSmall(ph results.Phase, o FindMaxOptions) string {
	pool := int64(o.Load.Pool)
	if pool == 0 {
		pool = schedule.DefaultPool
	}
	unc := int64(0)
	mean := 0.0
	if h := ph.Latency["ok_uncorrected"]; h != nil {
		unc, mean = h.Percentiles["99"], h.Mean
	}
	rate := float64(ph.Counts["intended"]) / (float64(ph.Duration) / 1e9)
	need := rate * mean / 1e9
	if unc > int64(o.P99) || need < 0.8*float64(pool) {
		return ""
	}
	return fmt.Sprintf(" (the pool of %d is too small: %.0f/s at %v per reply needs ~%.0f in flight; raise --load-pool)",
		pool, rate, roundLat(time.Duration(mean)), need)
}

// stepOutcomes are a step's outcomes as its judgement reads them.
type stepOutcomes struct {
	requested, accepted, refused, dropped, noReply, cancelled int64
}

// stepOutcomesOf reads a step's event account: dropped are the slots not
// started in time (Drops: relay- or client-limited); without a reply are those
// timed out, whose connection was lost, or not run for another reason (the
// step stopped early).
func stepOutcomesOf(ph results.Phase) stepOutcomes {
	a := ph.Account(results.OpEvent)
	if a == nil {
		return stepOutcomes{}
	}
	drops := Drops(*a)
	return stepOutcomes{requested: a.Requested, accepted: a.Accepted, refused: a.Refused, dropped: drops,
		noReply: a.TimedOut + a.ConnLost + a.NotRun - drops, cancelled: a.Cancelled}
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
	ph.Rates = map[string]float64{results.RateMaxRate: res.Max}
	if res.FirstFail > 0 {
		ph.Rates["first_failing_rate"] = res.FirstFail
	}
	ph.ClientLimited = res.ClientLimited
	ph.Aborted = res.Aborted
	table := []string{
		fmt.Sprintf("find-max: %s (target: corrected OK p99 ≤ %v, %s dropped, %s refused, none failed; %v steps, first %v excluded)",
			res.Answer, o.P99, atMost(o.MaxDrops), atMost(o.MaxRefusals), o.StepDuration, o.Warmup),
		"| offered/s | achieved/s | OK p50 | OK p99 | OK p99 from actual send | lateness p99 | dropped | refused | failed | client cores | relay cores | verdict |",
		"|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
	}
	steps := res.Steps
	if res.Cut != nil {
		steps = append(append([]Step(nil), steps...), *res.Cut)
	}
	var acct results.Account
	for i, st := range steps {
		if i == 0 {
			ph.Start = st.Phase.Start
		}
		ph.Duration += st.Phase.Duration
		ph.SetupSecs += st.Phase.SetupSecs
		addToAccount(&acct, st.Phase.Account(results.OpEvent))
		addProtocolCounts(ph, st.Phase)
		g := findMaxStepGroup(st)
		ph.Groups = append(ph.Groups, g)
		table = append(table, findMaxStepRow(st, g, res.Cut != nil && i == len(steps)-1))
	}
	if acct.Op != "" {
		bookAccount(ph, acct) // the account, mirrored in accepted, refused, timed_out, failed, not_sent, cancelled
		// Its not run are mostly drops, never sends: named as the
		// account's outcome is ("not run"), not "not sent" beside it.
		ph.Counts["not_run"] = ph.Counts["not_sent"]
		delete(ph.Counts, "not_sent")
	}
	ph.Notes = append(ph.Notes, table...)
	ph.Notes = append(ph.Notes, "the event account sums every step's: steps above the relay's capacity fail by design (their refusals, timeouts and drops are what the search measures)")
	if res.Cut != nil {
		ph.Notes = append(ph.Notes, fmt.Sprintf("interrupted during the %s/s step: it is not judged, and its work not done is cancelled", fmtRate(res.Cut.Rate)))
	}
	if stopWhy != "" {
		ph.Notes = append(ph.Notes, stopWhy)
	}
	if res.ClientLimited {
		ph.Notes = append(ph.Notes, clientLimitedNote(res))
	}
}

// atMost is an allowance of a passing step: "none" for 0 ("≤ 0 dropped"
// read oddly), else "≤ N".
func atMost(n int64) string {
	if n == 0 {
		return "none"
	}
	return "≤ " + numfmt.Group(n)
}

// clientLimitedNote is a client-limited search's note: its answer is a
// lower bound, and the remedy load's judgement of the step that stopped
// it implies: when that step's lateness came from outside the client's own
// work (LateFromOutside), a quieter machine, not more CPU; when the client
// itself was the limit, more CPU or a bigger pool. A search stopped by
// --load-max-events has no such step: its stop note says why. A search
// that other processes competing for the machine's cores stopped says so
// (machineBusyNote).
func clientLimitedNote(res *FindMaxResult) string {
	n := "client-limited: the answer is a lower bound on the relay's capacity, not a relay figure"
	i := len(res.Steps) - 1
	for i >= 0 && !res.Steps[i].ClientLimited {
		i--
	}
	if i < 0 {
		return n
	}
	st := res.Steps[i]
	if st.Machine != "" {
		return machineBusyNote(st)
	}
	outside := slices.ContainsFunc(st.Phase.Notes, func(s string) bool { return strings.Contains(s, LateFromOutside) })
	if secs := float64(st.Phase.Duration) / 1e9; outside && st.Phase.Resources != nil && secs > 0 {
		if slices.ContainsFunc(st.Phase.Notes, func(s string) bool { return strings.Contains(s, LateFromOS) }) {
			return fmt.Sprintf("%s; at %s/s the client used %.2f cores and %s%s: not more CPU or a bigger --load-pool; a machine with less timer and scheduling latency (less shared, or not virtual) avoids it",
				n, fmtRate(st.Rate), st.Phase.Resources.ClientCPUSecs/secs, LateFromOutside, LateFromOS)
		}
		return fmt.Sprintf("%s; at %s/s the client used %.2f cores and %s%s: a quieter machine avoids it, not more CPU or a bigger --load-pool",
			n, fmtRate(st.Rate), st.Phase.Resources.ClientCPUSecs/secs, LateFromOutside, lateFromOthers)
	}
	return n + "; give the client more CPU (--client-cpus/--relay-cpus on separate cores) or a bigger --load-pool"
}

// machineBusyNote is the note of a search a step stopped that other
// processes competing for the machine's cores explain: its answer is a
// lower bound, what each side used, the machine's load, and the remedy.
func machineBusyNote(st Step) string {
	n := "machine busy: the answer is a lower bound on the relay's capacity, not a relay figure"
	used := ""
	if r, secs := st.Phase.Resources, float64(st.Phase.Duration)/1e9; r != nil && secs > 0 {
		used = fmt.Sprintf(" the client used %.2f cores and the relay %.2f, while", r.ClientCPUSecs/secs, r.RelayCPUSecs/secs)
	}
	return fmt.Sprintf("%s; at %s/s%s %s: a quieter machine, or the relay and relaybench on cores of their own (--relay-cpus/--client-cpus), gives the relay's figure",
		n, fmtRate(st.Rate), used, st.Machine)
}

// addProtocolCounts carries a step's protocol faults and counters into the
// search's phase (the one the judge reads): malformed frames, foreign and
// late OKs, unsolicited EVENTs and those after a CLOSE, notices, bytes
// received.
func addProtocolCounts(ph *results.Phase, sp results.Phase) {
	for _, k := range []string{"malformed_frames", "foreign_oks", "late_oks", "unsolicited_events", "events_after_close", "notices", "bytes_received"} {
		if n := sp.Counts[k]; n > 0 {
			ph.Counts[k] += n
		}
	}
	carryAuth(ph, sp) // NIP-42 round trips (auth.go)
	for _, e := range sp.Errors {
		if strings.Contains(e, "malformed") || strings.Contains(e, "never sent") || strings.Contains(e, "never opened") {
			ph.Errors = verify.AppendUnique(ph.Errors, sp.Name+": "+e)
		}
	}
}

// addToAccount adds a to t (t takes a's op when empty).
func addToAccount(t *results.Account, a *results.Account) {
	if a == nil {
		return
	}
	t.Op = a.Op
	t.Add(*a)
}

// stepGroup is one step's Group: its outcomes (from its account), latency
// and resources.
func findMaxStepGroup(st Step) results.Group {
	sp := st.Phase
	so := stepOutcomesOf(sp)
	g := results.Group{
		Name: fmt.Sprintf("%s/s", fmtRate(st.Rate)),
		Counts: map[string]int64{"intended": sp.Counts["intended"], results.CountSent: sp.Counts[results.CountSent], results.CountAccepted: so.accepted,
			results.CountRefused: so.refused, "dropped": so.dropped, results.CountFailed: so.noReply, "canceled": so.cancelled},
		Rates:   map[string]float64{"offered_per_sec": st.Rate},
		Latency: map[string]*results.Histogram{},
	}
	if st.Pass {
		g.Counts["pass"] = 1
	} else {
		g.Counts["pass"] = 0
	}
	if st.ClientLimited {
		g.Counts["client_limited"] = 1
	}
	if st.Machine != "" {
		g.Counts["machine_busy"] = 1
	}
	if st.RelayOrMachine {
		g.Counts["relay_or_machine"] = 1 // the judge's cue: the relay or the machine, not the client (judge.Phase)
	}
	for _, k := range []string{"ok", "ok_uncorrected", "lateness"} {
		if h := sp.Latency[k]; h != nil {
			g.Latency[k] = h
		}
	}
	if secs := float64(sp.Duration) / 1e9; secs > 0 {
		g.Rates[results.RateAchieved] = float64(so.accepted) / secs
		if r := sp.Resources; r != nil {
			g.Rates["client_cpu_cores"] = r.ClientCPUSecs / secs
			if r.RelayCPUSecs > 0 {
				g.Rates["relay_cpu_cores"] = r.RelayCPUSecs / secs
			}
		}
	}
	return g
}

// stepRow is one step's line of the curve table.
func findMaxStepRow(st Step, g results.Group, cut bool) string {
	sp := st.Phase
	q := func(k, p string) string {
		if h := sp.Latency[k]; h != nil && h.Count > 0 {
			return numfmt.Dur(time.Duration(h.Percentiles[p])) // as the group table has it: 4.80ms, not 4.8ms
		}
		return "–"
	}
	verdict := "pass"
	switch {
	case cut:
		verdict = "interrupted (not judged)"
	case !st.Pass && st.Machine != "":
		verdict = "fail: " + st.Why // "(late from outside: …)", "(relay or machine: …)": the machine's load
	case !st.Pass && st.ClientLimited:
		verdict = "client-limited: " + st.Why
	case !st.Pass:
		verdict = "fail: " + st.Why
	}
	relayStr := "–"
	if rc := g.Rates["relay_cpu_cores"]; rc > 0 {
		relayStr = fmt.Sprintf("%.2f", rc)
	}
	return fmt.Sprintf("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %.2f | %s | %s |",
		fmtRate(st.Rate), fmtRate(g.Rates[results.RateAchieved]), q("ok", "50"), q("ok", "99"), q("ok_uncorrected", "99"),
		q("lateness", "99"), numfmt.Group(g.Counts["dropped"]), numfmt.Group(g.Counts[results.CountRefused]), numfmt.Group(g.Counts[results.CountFailed]),
		g.Rates["client_cpu_cores"], relayStr, verdict)
}
