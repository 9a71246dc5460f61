package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/relaybench/relaybench/corpus"
	"github.com/relaybench/relaybench/flagcheck"
	"github.com/relaybench/relaybench/harness"
	"github.com/relaybench/relaybench/internal/numfmt"
	"github.com/relaybench/relaybench/internal/progress"
	"github.com/relaybench/relaybench/nostr"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/runner"
	"github.com/relaybench/relaybench/schedule"
	"github.com/relaybench/relaybench/threshold"
	"github.com/relaybench/relaybench/workload"
)

// loadRunFlags are the open-loop settings load and find-max check the same
// way (each declares its own flags: their defaults differ).
type loadRunFlags struct {
	workload.LoadTuning
	Constraints string
	Timeout     time.Duration
}

// validate checks the open-loop flags; total is the length of the pattern,
// suite or step (the flag durFlag) the warm-up must be shorter than.
func (f loadRunFlags) validate(durFlag string, total time.Duration) error {
	var r ranges
	r.Min("load-pool", f.Pool, 1)
	r.Min("load-connections", f.Connections, 0)
	r.Positive("load-max-lateness", f.MaxLateness)
	r.NotNegative("load-warmup", f.Warmup)
	if f.Warmup > 0 && total > 0 && f.Warmup >= total {
		r.Bad("load-warmup", f.Warmup, "must be shorter than --%s %v", durFlag, total)
	}
	r.Between("load-max-events", f.MaxEvents, 0, flagcheck.MaxRunEvents)
	r.Positive("timeout", f.Timeout)
	if r.Err() == nil && f.Constraints != "" {
		_, err := harness.ParseLimits(f.Constraints)
		r.Add(err)
	}
	f.checkCosts(&r)
	return r.Err()
}

// checkCosts refuses a pool or connections the machine cannot pay for
// (flagcheck): a worker per op in flight, min(pool, connections) conns.
func (f loadRunFlags) checkCosts(r *ranges) {
	r.Memory("load-pool", f.Pool, float64(f.Pool), 8<<10, "worker")
	if f.Connections > 0 {
		r.Conns("load-connections", f.Connections, f.Connections)
	}
}

// limitRelay applies --load-constraints to the relay relaybench started.
// cleanup removes the cgroup; call it after the relay stopped.
func (f loadRunFlags) limitRelay(s *liveSession) (inst *harness.Instance, cleanup func(), err error) {
	if f.Constraints == "" {
		return nil, func() {}, nil
	}
	l, err := harness.ParseLimits(f.Constraints)
	if err != nil {
		return nil, nil, err
	}
	inst, ok := s.target.Probe.(*harness.Instance)
	if !ok || inst == nil {
		return nil, nil, errors.New("--load-constraints: needs a relay started by relaybench (leave out --relay)")
	}
	cleanup, err = inst.Limit(l)
	if err != nil {
		return nil, nil, fmt.Errorf("--load-constraints: %w", err)
	}
	// Each phase's note names the limits with what they did (limitNotes).
	return inst, cleanup, nil
}

// limitNotes adds to ph what the limited relay went through (a note of the
// limits' figures) and, when it died, says so once: as run's error ("relay
// died during load: OOM-killed under cpu=0.5,mem=256M …", the verdict's
// first reason), the ops the phase dropped because every slot was waiting
// on it booked to its death (diedDrops).
func limitNotes(run *results.Run, ph *results.Phase, inst *harness.Instance) {
	if inst == nil {
		return
	}
	r, ok := inst.LimitReport()
	if !ok {
		return
	}
	ph.Notes = append(ph.Notes, r.Usage())
	ph.Counts["relay_oom_kills"] = r.OOMKills
	ph.Counts["relay_cpu_throttled_periods"] = r.CPUThrottled
	if d := r.Death(); d != "" {
		run.Errors = append(run.Errors, "relay died during "+ph.Name+": "+d)
		diedDrops(ph)
	}
}

// whyDiedDrop is the why of a load slot not started within max lateness in
// a phase during which the relay died: its pool was full of ops waiting on
// the relay, so the relay's death, not the client, kept it from starting.
const whyDiedDrop = "relay died: not started within max lateness, every in-flight slot waiting on the relay"

// diedDrops books ph's slots not started in time (workload.IsDrop: booked
// relay- or client-limited by the load's own judgement) to the relay's
// death: work the relay prevented, as the verdict counts it.
func diedDrops(ph *results.Phase) {
	for i := range ph.Accounts {
		a := &ph.Accounts[i]
		for why, n := range a.NotRunBy {
			if workload.IsDrop(why) {
				delete(a.NotRunBy, why)
				a.NotRunBy[whyDiedDrop] += n
			}
		}
	}
}

// relayDied reports why the relay relaybench started is gone, or "".
func relayDied(inst *harness.Instance) string {
	if inst == nil {
		return ""
	}
	select {
	case <-inst.Exited():
		if err := inst.ExitErr(); err != nil {
			return err.Error()
		}
		return "relay exited"
	default:
		return ""
	}
}

type loadCmd struct {
	targetFlags
	corpusFlags
	outputFlags
	segmentFlags
	workload.LoadSpec
	Constraints string        `name:"load-constraints" placeholder:"CPU,MEM" help:"Run the relay relaybench starts under these limits (cgroups), e.g. cpu=0.5,mem=256M (reference: -load-constraints)."`
	Timeout     time.Duration `default:"10s" help:"How long an EVENT may wait for its OK, and a REQ for its EOSE."`
}

func init() {
	registerWorkload("load", &loadCmd{})
}

// checkFlags checks every flag, the pattern and the events it needs before
// anything starts (see check.go).
func (c *loadCmd) checkFlags() error {
	var r ranges
	r.Add(c.targetFlags.validate())
	r.Add(c.corpusFlags.validate())
	r.Positive("load-duration", c.Duration)
	r.Add(c.runFlags().validate("load-duration", c.Duration))
	r.NotNegative("load-period", c.Period)
	r.NotNegative("load-every", c.Every)
	r.NotNegative("load-width", c.Width)
	r.NotNegative("load-at", c.At)
	r.Min("load-steps", c.Steps, 0)
	r.Memory("load-steps", c.Steps, float64(c.Steps), 64, "step")
	r.QueryLimit("query-limit", c.Limit)
	r.RateMax("load-base", c.BaseRate, true, "load-duration", c.Duration)
	r.RateMax("load-peak", c.Peak, true, "load-duration", c.Duration)
	r.Add(c.outputFlags.validate())
	r.Add(c.segmentFlags.validate())
	if r.Err() == nil {
		r.Add(c.segmentFlags.loadSegmented(c.targetFlags, c.Kind))
	}
	if r.Err() != nil {
		return r.Err()
	}
	p, err := c.plan()
	if err != nil {
		return err
	}
	return c.checkEvents(p)
}

// checkEvents refuses a pattern needing more events than --load-max-events
// or the free space of the temporary folder, before anything starts.
func (c *loadCmd) checkEvents(lp loadPlan) error {
	for i, p := range lp.pats {
		o := lp.base
		o.Pattern = p
		n, err := o.EventsNeeded()
		if err != nil {
			return err
		}
		if c.MaxEvents > 0 && n > int64(c.MaxEvents) {
			return fmt.Errorf("--load-max-events %d: %s (%s) needs %d distinct events, above the cap; raise --load-max-events or lower the rate or duration", c.MaxEvents, lp.names[i], p, n)
		}
		if need, free := workload.FreshDiskNeed(int(n), c.corpusFlags.Size), corpus.TempFree(); free > 0 && need > free {
			return fmt.Errorf("%s: %s (%s) needs %d distinct events, about %.1f GB in %s, and %.1f GB is free: set TMPDIR to a bigger disk or lower the rate or duration",
				c.rateFlag(), lp.names[i], p, n, float64(need)/1e9, os.TempDir(), float64(free)/1e9)
		}
	}
	return nil
}

// rateFlag names the rate flag that sets how many events the pattern
// needs, with its value: --load-base for a constant or Poisson pattern,
// else --load-peak.
func (c *loadCmd) rateFlag() string {
	if c.Suite == "" && (c.Pattern == "constant" || c.Pattern == "poisson") {
		return fmt.Sprintf("--load-base %g", c.BaseRate)
	}
	return fmt.Sprintf("--load-peak %g", c.Peak)
}

// queryCorpusPhase is the phase that publishes the corpus a query or mixed
// load draws its queries from.
const queryCorpusPhase = "publish (query corpus)"

// figurePlan is what load writes, for checking --threshold figures before
// any work: its load phases (load, load/PATTERN of a suite), after the
// corpus's publish phase for a load with queries.
func (c *loadCmd) figurePlan() threshold.Plan {
	p := livePlan(false, "load")
	if c.Kind != workload.LoadPublish {
		p.Phases[queryCorpusPhase] = workload.RunPlan(nil).Phases["publish"]
	}
	return p
}

// loadPlan is what a load runs: each phase's name and pattern, and the
// options every phase shares.
type loadPlan struct {
	names []string
	pats  []schedule.Pattern
	base  workload.LoadOptions
}

// plan is the load these flags ask for (checkFlags has checked them).
func (c *loadCmd) plan() (loadPlan, error) {
	spec := c.spec()
	names, pats, err := spec.Patterns()
	if err != nil {
		return loadPlan{}, err
	}
	base, err := spec.Options()
	return loadPlan{names, pats, base}, err
}

// spec is the load workload's options as these flags set them.
func (c *loadCmd) spec() workload.LoadSpec {
	o := c.LoadSpec
	o.Timeout, o.Seed, o.Size = c.Timeout, c.corpusFlags.Seed, c.corpusFlags.Size
	return o
}

// runFlags are the open-loop settings, to check.
func (c *loadCmd) runFlags() loadRunFlags {
	return loadRunFlags{LoadTuning: c.LoadTuning, Constraints: c.Constraints, Timeout: c.Timeout}
}

func (c *loadCmd) Run(g *Globals) error {
	lp, err := c.plan()
	if err != nil {
		return err
	}

	s, err := startLive(g, "load", c.targetFlags, c.outputFlags)
	if err != nil {
		return err
	}
	params := map[string]any{
		"pattern": c.Pattern, "duration": c.Duration.String(), "base": c.BaseRate, "peak": c.Peak, "pool": c.Pool,
		"connections": c.Connections, "kind": c.Kind, "mix": c.Mix, "suite": c.Suite, "constraints": c.Constraints,
		"max_lateness": c.MaxLateness.String(), "warmup": c.Warmup.String(), "size": c.corpusFlags.Size, "store": c.Store,
	}
	inst, cleanup, err := c.runFlags().limitRelay(s)
	if err != nil {
		s.stop()
		return err
	}
	defer cleanup() // after finish has stopped the relay
	// --segment, --start-at: this instance's share, from a common start.
	c.segRun = runner.StartSegment(g.Ctx, s.run, s.target.URL, c.seg, c.startAt)
	c.segRun.Announce(s.waitNotice())
	err = c.measure(g.Ctx, s, inst, lp)
	c.segRun.End(s.run)
	return s.finish(params, err)
}

// measure runs the phases of the load command.
func (c *loadCmd) measure(ctx context.Context, s *liveSession, inst *harness.Instance, lp loadPlan) error {
	var keys *corpus.Corpus
	var source []*nostr.Event
	var err error
	if c.Kind == workload.LoadPublish {
		keys, err = liveKeyFlags{Seed: c.corpusFlags.Seed, Authors: c.Authors, CacheDir: c.CacheDir}.keys(ctx)
	} else {
		// Queries need events the relay holds: publish the corpus first.
		keys, err = loadCorpus(ctx, c.corpusFlags, s.prog)
		if err == nil {
			source, err = c.publishCorpus(ctx, s, keys)
		}
	}
	if err != nil {
		return err
	}
	s.setCorpus(keys)
	if c.Kind == workload.LoadPublish {
		s.run.Corpus.Authors = signingKeys(keys) // the keys that sign, as conformance --under-load records
	}
	for i, p := range lp.pats {
		if why := relayDied(inst); why != "" {
			return fmt.Errorf("%s not run: %s", lp.names[i], why)
		}
		o := lp.base
		o.Name, o.Pattern, o.Source = lp.names[i], p, source
		o.Show = progressFunc(s.prog) // a mixed load's read-back; the phase, under --quiet
		if s.target.Probe != nil {
			o.Begin = s.target.Probe.Begin
		}
		o.Begin, o.Segment = c.segRun.Sampler(o.Begin), c.seg
		if !c.Quiet {
			c.announce(ctx, &o, keys)
		}
		stopProfile := startCPUProfile(o.Name)
		ph, err := workload.Load(ctx, s.target.URL, keys, o)
		stopProfile()
		c.segRun.Settle(&ph)
		if ph.Counts != nil {
			limitNotes(s.run, &ph, inst)
			s.run.Phases = append(s.run.Phases, ph)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// announce says the phase o runs before its clock starts, as its plan
// (pattern and operations), after signing its fresh events when it has
// any, and shows it by the second (o.Live) unless --no-progress.
func (c *loadCmd) announce(ctx context.Context, o *workload.LoadOptions, keys *corpus.Corpus) {
	if !c.NoProgress {
		o.Live = os.Stderr
	}
	plan, err := o.PlanText()
	if err != nil {
		return // Load says it
	}
	n, _ := o.EventsNeeded()
	if n == 0 {
		fmt.Fprintf(os.Stderr, "%s: %s\n", o.Name, plan)
		return
	}
	fmt.Fprintf(os.Stderr, "%s: signing %s fresh events before the clock starts%s...\n", o.Name, num(n), signEstimate(ctx, keys, n, c.corpusFlags.Size))
	o.Signed = func(n int, took time.Duration) {
		fmt.Fprintf(os.Stderr, "%s: signed %s events in %s; %s\n", o.Name, num(n), numfmt.Dur(took), plan)
	}
}

// publishCorpus publishes the corpus (pipelined) so that queries match, and
// returns the events the relay accepted.
func (c *loadCmd) publishCorpus(ctx context.Context, s *liveSession, crp *corpus.Corpus) ([]*nostr.Event, error) {
	n := crp.Len()
	o := workload.PublishOptions{Base: workload.Base{Timeout: c.Timeout}, Connections: 4, Mode: workload.ModePipeline, Window: 256}
	o.Progress = progressFunc(s.prog)(progress.Counting(fmt.Sprintf("Publishing %s for the queries to match", numfmt.Count(n, "event")), "Published", "event", "events", int64(n)), int64(n))
	pr, err := workload.Publish(ctx, s.target.URL, crp, nil, o)
	if pr != nil {
		pr.Phase.Name = queryCorpusPhase
		s.run.Phases = append(s.run.Phases, pr.Phase)
	}
	if err != nil {
		return nil, err
	}
	var out []*nostr.Event
	for _, i := range pr.AcceptedIndexes() {
		e, err := crp.EventAt(i)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("the relay accepted none of the %d corpus events: nothing to query", n)
	}
	return out, nil
}

// signEstimate says how long signing n events of size bytes will take ("
// (about 4.20s at this machine's signing rate, 1.58 GiB in /tmp)") when
// that is over signSaid, from signing a sample of them now on all cores: a
// 50th of n, at most 2,048, so the sample adds about 2% to the wait. ""
// when signing is quicker, when n is under signProbed (a few hundred
// milliseconds of signing on a 2-core machine: not worth a sample), or
// when it cannot be measured.
func signEstimate(ctx context.Context, keys *corpus.Corpus, n int64, size int) string {
	if n < signProbed || keys == nil || len(keys.Authors) == 0 {
		return ""
	}
	probe := int(min(n/50, 2048))
	evs := make([]*nostr.Event, probe)
	authors := make([]*corpus.Author, probe)
	for i := range evs {
		evs[i] = &nostr.Event{CreatedAt: time.Now().Unix(), Kind: 1, Tags: []nostr.Tag{}, Content: strings.Repeat("x", size)}
		authors[i] = keys.Author(i)
	}
	start := time.Now()
	if err := corpus.SignEvents(ctx, evs, authors, corpus.Options{}); err != nil {
		return ""
	}
	took := time.Duration(float64(time.Since(start)) * float64(n) / float64(probe))
	if took < signSaid {
		return ""
	}
	return fmt.Sprintf(" (about %s at this machine's signing rate, %s in %s)", numfmt.Dur(took),
		numfmt.Bytes(float64(workload.FreshDiskNeed(int(n), size))), os.TempDir())
}

// signProbed is the fewest fresh events whose signing time signEstimate
// measures, and signSaid the signing time from which it says it.
const (
	signProbed = 5_000
	signSaid   = 2 * time.Second
)

// startCPUProfile writes a CPU profile of one phase (signing included) to
// $RELAYBENCH_CPUPROFILE (suffixed with the phase name when it has a
// slash-free form) when set: to see where the client's time goes.
func startCPUProfile(phase string) (stop func()) {
	path := os.Getenv("RELAYBENCH_CPUPROFILE")
	if path == "" {
		return func() {}
	}
	if phase != "load" {
		path += "." + strings.ReplaceAll(phase, "/", "-")
	}
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "RELAYBENCH_CPUPROFILE: %v\n", err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintf(os.Stderr, "RELAYBENCH_CPUPROFILE: %v\n", err)
		f.Close()
		return func() {}
	}
	return func() { pprof.StopCPUProfile(); f.Close() }
}

// workload is the open-loop load with this command's options, for
// --workloads load in run and compare: each pattern one phase, sampled on its
// own clock; query and mixed loads draw their REQs from what the relay holds
// after the publish phase.
func (c *loadCmd) workload() runner.Workload {
	o := c.spec()
	return declared("load", &o)
}
