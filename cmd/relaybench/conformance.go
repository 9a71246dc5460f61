package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/relaybench/relaybench/conformance"
	"github.com/relaybench/relaybench/corpus"
	"github.com/relaybench/relaybench/internal/numfmt"
	"github.com/relaybench/relaybench/nip11"
	"github.com/relaybench/relaybench/report"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/runner"
	"github.com/relaybench/relaybench/schedule"
	"github.com/relaybench/relaybench/threshold"
	"github.com/relaybench/relaybench/wire"
	"github.com/relaybench/relaybench/workload"
)

// conformanceFlags select the conformance checks and bound their waits
// (relaybench conformance, compare --conformance).
type conformanceFlags struct {
	Checks       []string      `name:"check" sep:"," placeholder:"ID" help:"Run only these conformance checks (IDs as in the conformance table, e.g. req.limit-zero; default: every check)."`
	CheckTimeout time.Duration `name:"check-timeout" default:"5s" help:"How long a conformance check waits for any one answer (an OK, an EOSE, a live event): a relay slower than this gets unknown, never fail."`
}

func (f conformanceFlags) validate() error {
	var r ranges
	r.Positive("check-timeout", f.CheckTimeout)
	_, err := f.selected()
	r.Add(err)
	return r.Err()
}

// selected is the checks to run, in the order conformance.Checks gives.
func (f conformanceFlags) selected() ([]conformance.Check, error) {
	all := conformance.Checks()
	if len(f.Checks) == 0 {
		return all, nil
	}
	want := map[string]bool{}
	for _, id := range f.Checks {
		want[strings.TrimSpace(id)] = true
	}
	var out []conformance.Check
	for _, c := range all {
		if want[c.ID] {
			out = append(out, c)
			delete(want, c.ID)
		}
	}
	for id := range want {
		var known []string
		for _, c := range all {
			known = append(known, c.ID)
		}
		return nil, fmt.Errorf("--check %s: no such check (there are: %s)", id, strings.Join(known, ", "))
	}
	return out, nil
}

// checkFigures refuses, before any work, the first threshold on a
// conformance figure the checks to run will not write: a check --check
// leaves out or that does not exist (conformance.req.nope), or any
// conformance figure when no check runs (run false: compare without
// --conformance). The error lists the conformance figures there will be,
// once. Other figures are the command's plan's (figurePlan).
func (f conformanceFlags) checkFigures(command string, run bool, ts []threshold.Threshold) error {
	prefix := threshold.ConformanceScope + "."
	var written map[string]threshold.Figure
	var ids []string
	if sel, err := f.selected(); run && err == nil {
		r := results.Run{}
		for _, c := range sel {
			r.Conformance = append(r.Conformance, results.Check{ID: c.ID, Status: results.CheckPass})
			ids = append(ids, c.ID)
		}
		written = threshold.Figures(&r) // the checks' figures, the tallies
	}
	for _, t := range ts {
		check, ok := strings.CutPrefix(t.Figure, prefix)
		if _, there := written[t.Figure]; !ok || there {
			continue
		}
		if !run {
			return fmt.Errorf("threshold %q: %s runs no conformance check without --conformance", t.Expr, command)
		}
		return fmt.Errorf("threshold %q: %s runs no check %s; its checks are %s; its tallies %s",
			t.Expr, command, check, strings.Join(ids, ", "), strings.Join(tallies(written, ids, prefix), ", "))
	}
	return nil
}

// tallies are the conformance figures of written that are not a check of
// ids: conformance.failed, …, sorted.
func tallies(written map[string]threshold.Figure, ids []string, prefix string) []string {
	var out []string
	for name := range written {
		if !slices.Contains(ids, strings.TrimPrefix(name, prefix)) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// params records the flags in the results file.
func (f conformanceFlags) record(p map[string]any) {
	p["check_timeout"] = f.CheckTimeout.String()
	if len(f.Checks) > 0 {
		p["checks"] = f.Checks
	}
}

// checkRun is one run of the conformance checks against one relay.
type checkRun struct {
	url   string
	info  *nip11.Info // nil: no NIP-11 document (checks that need a NIP are not announced)
	flags conformanceFlags
	// each is called after every check with its result and when it began
	// (nil: nothing).
	each func(i, n int, began time.Time, c results.Check)
}

// run runs the checks one after the other. Interrupted, the checks not
// reached are unknown (cancelled), so that every check asked for has one
// status; the error is then the context's.
func (cr checkRun) run(ctx context.Context) ([]results.Check, error) {
	sel, err := cr.flags.selected()
	if err != nil {
		return nil, err
	}
	opts := conformance.Options{Timeout: cr.flags.CheckTimeout}
	opts.Auth, opts.AuthAlways = checksAuth()
	out := make([]results.Check, 0, len(sel))
	for i, c := range sel {
		if ctx.Err() != nil {
			out = append(out, results.Check{ID: c.ID, NIP: c.NIP, Level: c.Level, Sentence: c.Sentence,
				Status: results.CheckUnknown, Detail: "cancelled: the run was interrupted before this check"})
			continue
		}
		began := time.Now()
		r := conformance.RunCheck(ctx, c, cr.url, cr.info, opts)
		out = append(out, r)
		if cr.each != nil {
			cr.each(i, len(sel), began, r)
		}
	}
	return out, ctx.Err()
}

// checksAuth is how the checks' connections answer NIP-42: as every
// connection of the command (--auth, --auth-key; auth.go). Nil with --auth
// off. Without a key the AUTH cannot be signed: the refusal stands and the
// check is not run, the evidence says why.
func checksAuth() (conformance.AuthFunc, bool) {
	a := wire.DefaultAuth()
	if a == nil || a.Mode == wire.AuthOff || a.Keys == nil {
		return nil, false
	}
	sign := func(challenge, relay string) ([]byte, string, error) {
		pub := a.Keys.KeyFor("")
		if pub == "" {
			return nil, "", errors.New("no key to sign it (--auth-key)")
		}
		return a.Keys.Sign(pub, challenge, relay)
	}
	return sign, a.Mode == wire.AuthEager
}

// progressLine prints one line per check on standard error.
func progressLine(i, n int, _ time.Time, c results.Check) {
	fmt.Fprintln(os.Stderr, checkProgress(i, n, c))
}

// checkIDWidth is the longest check ID: the statuses of the progress lines
// line up.
var checkIDWidth = sync.OnceValue(func() int {
	w := 0
	for _, c := range conformance.Checks() {
		w = max(w, len(c.ID))
	}
	return w
})

// checkProgress is the line said when check i of n ends, its status as
// the table shows it ("not announced").
func checkProgress(i, n int, c results.Check) string {
	return fmt.Sprintf("conformance %2d/%d %-*s %s (%d ms)", i+1, n, checkIDWidth(), c.ID, report.CheckLabel(c.Status), c.Millis)
}

// fetchChecksInfo reads a relay's NIP-11 document for the checks (nil and
// a note when it has none).
func fetchChecksInfo(ctx context.Context, url string) (*nip11.Info, string) {
	ictx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	info, _, err := nip11.Fetch(ictx, url)
	if err != nil {
		return nil, "conformance: no NIP-11 document (" + oneLine(err) + "): the checks that need a NIP are not announced"
	}
	return info, ""
}

type conformanceCmd struct {
	targetFlags
	liveKeyFlags
	outputFlags
	conformanceFlags
	UnderLoad    float64       `name:"under-load" placeholder:"RATE" help:"Run the checks while a background open-loop publisher sends fresh events at RATE events/s to the same relay (constant; 0: idle), round after round until it ends; each check keeps its worst round. Its phase (under-load) is in the results; its pool (10 in flight) and lateness limit (1s) are fixed."`
	LoadDuration time.Duration `name:"load-duration" default:"30s" help:"With --under-load: how long the background publisher runs (its events are signed before its clock starts; the checks start with it; a check of the first round begun after it ended is named in a note)."`
	Size         int           `default:"256" help:"With --under-load: content bytes of each background event."`
	LoadTimeout  time.Duration `name:"load-timeout" default:"10s" help:"With --under-load: how long a background EVENT may wait for its OK."`
}

func init() {
	register("conformance", "Check how a relay answers what real clients send (NIP-01 and the NIPs it announces): a table of checks with pass / FAIL (a MUST) / named (a SHOULD or MAY) / not announced / not run / unknown, each with its NIP sentence and evidence; optionally under a background load.", &conformanceCmd{})
}

// checkFlags checks every flag before anything starts (see check.go).
func (c *conformanceCmd) checkFlags() error {
	var r ranges
	r.Add(c.targetFlags.validate())
	r.Add(c.liveKeyFlags.validate())
	r.Add(c.conformanceFlags.validate())
	r.Positive("load-duration", c.LoadDuration)
	r.RateMax("under-load", c.UnderLoad, true, "load-duration", c.LoadDuration)
	r.Size("size", c.Size)
	r.Positive("load-timeout", c.LoadTimeout)
	if r.Err() == nil && c.UnderLoad > 0 {
		n := int(c.UnderLoad * c.LoadDuration.Seconds())
		if need, free := workload.FreshDiskNeed(n, c.Size), corpus.TempFree(); free > 0 && need > free {
			r.Bad("under-load", c.UnderLoad, "× --load-duration %v needs %d events, about %.1f GB in %s, and %.1f GB is free", c.LoadDuration, n, float64(need)/1e9, os.TempDir(), float64(free)/1e9)
		}
	}
	r.Add(c.outputFlags.validate())
	return r.Err()
}

// figurePlan is what conformance writes, for checking --threshold figures
// before any work: its checks (conformance.CHECK, conformance.TALLY) and,
// with --under-load, the background load's phase.
func (c *conformanceCmd) figurePlan() threshold.Plan {
	if c.UnderLoad > 0 {
		return livePlan(false, threshold.ConformanceScope, "under-load")
	}
	return livePlan(false, threshold.ConformanceScope)
}

// checkFigures: a threshold on a conformance check that will not run is
// refused before any work (conformanceFlags.checkFigures).
func (c *conformanceCmd) checkFigures(ts []threshold.Threshold) error {
	return c.conformanceFlags.checkFigures("conformance", true, ts)
}

func (c *conformanceCmd) Run(g *Globals) error {
	s, err := startLive(g, "conformance", c.targetFlags, c.outputFlags)
	if err != nil {
		return err
	}
	p := map[string]any{}
	c.conformanceFlags.record(p)
	if c.Relay == "" {
		p["store"] = c.Store
	}
	cr := checkRun{url: s.target.URL, info: s.info, flags: c.conformanceFlags}
	if !c.NoProgress && !c.Quiet {
		cr.each = progressLine
	}
	// A relay that cannot be reached is said as such (a *wire.DialError)
	// before any check (a --relay URL: startLive).
	if s.target.Managed {
		if err := workload.Reach(g.Ctx, s.target.URL); err != nil {
			// nothing to check: an error of the run (exit 1), not checks
			// the relay left undecided
			return s.finish(p, err)
		}
	}
	if c.UnderLoad == 0 {
		s.run.Conformance, err = cr.run(g.Ctx)
		if err == nil {
			err = runner.RelayDied(s.target)(s.run)
		}
		return s.finish(p, err)
	}
	p["under_load"], p["load_duration"], p["size"] = c.UnderLoad, c.LoadDuration.String(), c.Size
	err = c.underLoad(s, cr)
	return s.finish(p, err)
}

// underLoad runs the checks while the background load publishes: the
// load's events are signed first, the checks start when its clock does
// and run again, round after round, until the load's pattern ends (the
// load runs its whole pattern: no operation of it is cut short). Each
// check keeps its worst round (see worstRounds).
func (c *conformanceCmd) underLoad(s *liveSession, cr checkRun) error {
	keys, err := c.liveKeyFlags.keys(s.ctx)
	if err != nil {
		return err
	}
	o, started, err := c.loadOptions(s)
	if err != nil {
		return err
	}
	if n, _ := o.EventsNeeded(); !c.Quiet {
		fmt.Fprintf(os.Stderr, "under-load: signing %s background events before the clock starts...\n", numfmt.Group(int64(n)))
	}
	type loaded struct {
		ph  results.Phase
		err error
	}
	done := make(chan loaded, 1)
	go func() {
		ph, err := workload.Load(s.ctx, s.target.URL, keys, o)
		done <- loaded{ph, err}
	}()
	var l loaded
	select {
	case <-started:
	case l = <-done: // the load ended before its clock started: set-up failed
		return c.keepLoad(s, l.ph, fmt.Errorf("under-load: the background load did not start: %w", l.err))
	}
	rounds, cerr := c.rounds(s.ctx, cr, time.Now().Add(c.LoadDuration))
	s.run.Conformance = rounds.checks
	l = <-done
	if l.ph.Counts != nil && l.ph.Size == 0 {
		l.ph.Size = c.Size // the content size of the events it published
	}
	s.run.Notes = append(s.run.Notes, rounds.note(o.Pattern, c.Size))
	err = c.keepLoad(s, l.ph, l.err)
	s.setFresh(keys)
	if cerr != nil {
		return cerr
	}
	return err
}

// loadOptions are the background load's options; started is closed when
// its clock starts.
func (c *conformanceCmd) loadOptions(s *liveSession) (workload.LoadOptions, <-chan struct{}, error) {
	pat, err := schedule.Constant(c.UnderLoad, c.LoadDuration)
	if err != nil {
		return workload.LoadOptions{}, nil, err
	}
	o := workload.LoadOptions{Base: workload.Base{Timeout: c.LoadTimeout, Seed: c.liveKeyFlags.Seed}, Name: "under-load",
		Kind: workload.LoadPublish, Pattern: pat, Size: c.Size}
	started := make(chan struct{})
	var once sync.Once
	var inner workload.Sampler
	if s.target.Probe != nil {
		inner = s.target.Probe.Begin
	}
	o.Begin = func() func() *results.Resources {
		once.Do(func() { close(started) })
		if inner != nil {
			return inner()
		}
		return nil
	}
	return o, started, nil
}

// checkRounds are the rounds of checks run under the load.
type checkRounds struct {
	checks []results.Check // each check's worst round
	n      int             // rounds run
	took   time.Duration   // the first round's time
	after  []string        // checks of the first round begun after the load ended
}

// rounds runs the checks from now, round after round while the load runs
// (until end), at least once; the first round's lines go to cr.each, then
// a bounded number of lines (roundLines): -v prints one per round.
func (c *conformanceCmd) rounds(ctx context.Context, cr checkRun, end time.Time) (checkRounds, error) {
	var r checkRounds
	each := cr.each
	cr.each = func(i, n int, began time.Time, ch results.Check) {
		if began.After(end) {
			r.after = append(r.after, ch.ID)
		}
		if each != nil {
			each(i, n, began, ch)
		}
	}
	var worst []worstCheck
	var lines roundLines
	for r.n == 0 || (time.Now().Before(end) && ctx.Err() == nil) {
		start := time.Now()
		checks, err := cr.run(ctx)
		r.n++
		worst = worstRounds(worst, checks, r.n)
		if r.n == 1 {
			r.took, cr.each = time.Since(start), nil
			lines = roundLines{from: start, every: time.Until(end) / 10}
		} else if each != nil {
			lines.round(r.n, checks, worst, time.Now().Before(end) && ctx.Err() == nil)
		}
		if err != nil {
			r.checks = settleRounds(worst, r.n)
			return r, err
		}
	}
	r.checks = settleRounds(worst, r.n)
	return r, nil
}

// roundLines says how the rounds after the first go, on standard error:
// with -v a line per round (its own tally); else at most one line per
// tenth of the load's duration and one after the last round, each with
// every check's worst round so far, so that a long load prints about ten
// lines, not one per round.
type roundLines struct {
	from  time.Time     // the first round's start
	every time.Duration // between two lines
	last  time.Time     // the last line's time
}

func (l *roundLines) round(n int, checks []results.Check, worst []worstCheck, more bool) {
	if fullSummary { // -v
		fmt.Fprintf(os.Stderr, "under-load: round %d: %s\n", n, tallyLine(checks))
		return
	}
	now := time.Now()
	since := l.from
	if l.last.After(since) {
		since = l.last
	}
	if more && now.Sub(since) < l.every {
		return
	}
	l.last = now
	ws := make([]results.Check, len(worst))
	for i, w := range worst {
		ws[i] = w.check
	}
	fmt.Fprintf(os.Stderr, "under-load: %d rounds in %s, each check's worst so far: %s\n",
		n, numfmt.Dur(now.Sub(l.from)), tallyLine(ws))
}

// note says how the checks ran under the load.
func (r checkRounds) note(p schedule.Pattern, size int) string {
	note := fmt.Sprintf("conformance checks run under a background load (phase under-load: %s, %d-byte events): %d rounds while it ran, the first in %s; each check's status is its worst round",
		p, size, r.n, numfmt.Dur(r.took))
	if len(r.after) > 0 {
		note += fmt.Sprintf("; %d checks of the first round began after the load ended, so ran without it: %s (raise --load-duration)", len(r.after), strings.Join(r.after, ", "))
	}
	return note
}

// worstCheck is a check's worst round so far and how many rounds ended so.
type worstCheck struct {
	check results.Check
	round int // the round it is from (1-based)
	same  int // rounds that ended in its status
}

// statusRank orders statuses from worst (0) to best.
var statusRank = map[results.CheckStatus]int{results.CheckFail: 0, results.CheckUnknown: 1, results.CheckNotRun: 2,
	results.CheckNamed: 3, results.CheckNotAnnounced: 4, results.CheckPass: 5}

// worstRounds folds round's checks into w: a check keeps its worst round
// (the first of equals).
func worstRounds(w []worstCheck, round []results.Check, n int) []worstCheck {
	if w == nil {
		w = make([]worstCheck, len(round))
		for i, c := range round {
			w[i] = worstCheck{c, n, 1}
		}
		return w
	}
	for i, c := range round {
		switch rc, rw := statusRank[c.Status], statusRank[w[i].check.Status]; {
		case rc < rw:
			w[i] = worstCheck{c, n, 1}
		case rc == rw:
			w[i].same++
		}
	}
	return w
}

// settleRounds is each check's worst round, its detail saying which round
// of how many and how many ended so.
func settleRounds(w []worstCheck, n int) []results.Check {
	out := make([]results.Check, len(w))
	for i, wc := range w {
		out[i] = wc.check
		if n > 1 && wc.check.Status != results.CheckPass {
			out[i].Detail = fmt.Sprintf("round %d of %d (%d of %d rounds %s): %s", wc.round, n, wc.same, n, report.CheckLabel(wc.check.Status), wc.check.Detail)
		}
	}
	return out
}

// tallyLine counts a round's checks by status.
func tallyLine(checks []results.Check) string {
	n := map[results.CheckStatus]int{}
	for _, c := range checks {
		n[c.Status]++
	}
	var parts []string
	for _, st := range []results.CheckStatus{results.CheckPass, results.CheckFail, results.CheckNamed, results.CheckNotAnnounced, results.CheckNotRun, results.CheckUnknown} {
		if n[st] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[st], report.CheckLabel(st)))
		}
	}
	return strings.Join(parts, ", ")
}

// keepLoad records the background load's phase and checks whether the
// relay relaybench started died under it. What the phase says names no
// flag conformance lacks: its pool and lateness limit, which conformance
// fixes, are said so ("all 10 in-flight slots (conformance's fixed
// pool)"), its rate is --under-load, and its --load-duration and
// --load-timeout are conformance's own (underLoadWords).
func (c *conformanceCmd) keepLoad(s *liveSession, ph results.Phase, err error) error {
	workload.LoadCommandsFlags(&ph, underLoadWords)
	return s.keep([]results.Phase{ph}, err)
}

// underLoadWords are what conformance --under-load says for the load
// command's flags its background load may name (workload.LoadCommandsFlags).
var underLoadWords = map[string]string{
	"--load-pool":         "conformance's fixed pool",
	"--load-max-lateness": "conformance's fixed lateness limit",
	"--load-connections":  "conformance's fixed connections",
	"--load-base":         "--under-load",
	"--load-duration":     "--load-duration",
	"--load-timeout":      "--load-timeout",
}
