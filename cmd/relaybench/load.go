package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/relaybench/relaybench/corpus"
	"github.com/relaybench/relaybench/harness"
	"github.com/relaybench/relaybench/nostr"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/runner"
	"github.com/relaybench/relaybench/schedule"
	"github.com/relaybench/relaybench/workload"
)

// loadRunFlags are the open-loop flags shared by load and find-max.
type loadRunFlags struct {
	Pool        int           `name:"load-pool" default:"10" help:"Most operations in flight at once (reference: -load-pool). An op due while all are busy waits up to --load-max-lateness, then is dropped and counted."`
	Connections int           `name:"load-connections" default:"0" help:"Connections the ops are spread over (default min(--load-pool, 8))."`
	MaxLateness time.Duration `name:"load-max-lateness" default:"1s" help:"An op that cannot start within this of its intended time is dropped (counted, never silently lost)."`
	Warmup      time.Duration `name:"load-warmup" default:"0s" help:"Ops intended in this first part are counted but left out of latency and lateness."`
	MaxEvents   int           `name:"load-max-events" default:"0" help:"Refuse a pattern needing more distinct pre-signed events than this (events are never reused); 0: no cap. They are signed into a temporary file (about 1.7 KB per 1 KB event in $TMPDIR), not held in memory: the limits are disk space and the signing time, said before it starts."`
	Constraints string        `name:"load-constraints" placeholder:"CPU,MEM" help:"Run the relay relaybench starts under these limits (cgroups), e.g. cpu=0.5,mem=256M (reference: -load-constraints)."`
	Timeout     time.Duration `default:"10s" help:"How long an EVENT may wait for its OK, and a REQ for its EOSE."`
}

// validate checks the open-loop flags; total is the length of the pattern
// (or suite) the warm-up must be shorter than.
func (f loadRunFlags) validate(total time.Duration) error {
	var r ranges
	r.min("load-pool", f.Pool, 1)
	r.min("load-connections", f.Connections, 0)
	r.positive("load-max-lateness", f.MaxLateness)
	r.notNegative("load-warmup", f.Warmup)
	if f.Warmup > 0 && total > 0 && f.Warmup >= total {
		r.bad("load-warmup", f.Warmup, "must be shorter than --load-duration %v", total)
	}
	r.between("load-max-events", f.MaxEvents, 0, maxRunEvents)
	r.positive("timeout", f.Timeout)
	if r.err == nil && f.Constraints != "" {
		_, err := harness.ParseLimits(f.Constraints)
		r.add(err)
	}
	f.checkCosts(&r)
	return r.err
}

// checkCosts refuses a pool or connections the machine cannot pay for
// (budget.go): a worker per op in flight, min(pool, connections) conns.
func (f loadRunFlags) checkCosts(r *ranges) {
	r.memory("load-pool", f.Pool, float64(f.Pool), 8<<10, "worker")
	if f.Connections > 0 {
		r.conns("load-connections", f.Connections, f.Connections)
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
		return nil, nil, errors.New("-load-constraints: needs a relay started by relaybench (leave out --relay)")
	}
	cleanup, err = inst.Limit(l)
	if err != nil {
		return nil, nil, fmt.Errorf("-load-constraints: %w", err)
	}
	s.run.Notes = append(s.run.Notes, fmt.Sprintf("relay run under resource limits %s", l))
	return inst, cleanup, nil
}

// limitNotes adds to ph what the limited relay went through.
func limitNotes(ph *results.Phase, inst *harness.Instance) {
	if inst == nil {
		return
	}
	r, ok := inst.LimitReport()
	if !ok {
		return
	}
	ph.Notes = append(ph.Notes, r.Summary())
	ph.Counts["relay_oom_kills"] = r.OOMKills
	ph.Counts["relay_cpu_throttled_periods"] = r.CPUThrottled
	if r.ExitErr != "" || r.OOMKills > 0 {
		ph.Errors = append(ph.Errors, r.Summary())
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
	loadRunFlags
	segmentFlags
	Pattern  string        `name:"load-pattern" default:"constant" help:"Arrival pattern: constant, ramp, step, spike, burst, sine, poisson (reference: -load-pattern)."`
	Duration time.Duration `name:"load-duration" default:"60s" help:"Length of the pattern, or of the whole suite (reference: -load-duration)."`
	Base     float64       `name:"load-base" default:"50" help:"Base rate in ops/s (reference: -load-base)."`
	Peak     float64       `name:"load-peak" default:"200" help:"Peak rate in ops/s (reference: -load-peak)."`
	Kind     string        `name:"load-kind" default:"publish" enum:"publish,query,mixed" help:"publish (distinct pre-signed events, done at OK), query (REQs drawn from the published corpus, done at EOSE) or mixed (--load-mix)."`
	Mix      string        `name:"load-mix" default:"4:1" placeholder:"P:Q" help:"Mixed load: publishes to queries."`
	Seed     int64         `name:"load-seed" default:"1" help:"Poisson arrivals' seed."`
	Period   time.Duration `name:"load-period" default:"0s" help:"Sine period (default: the duration)."`
	Every    time.Duration `name:"load-every" default:"0s" help:"Burst: a burst every this long (default duration/6)."`
	Width    time.Duration `name:"load-width" default:"0s" help:"Spike or burst width (default duration/10, every/10)."`
	At       time.Duration `name:"load-at" default:"0s" help:"Spike start (default: centred)."`
	Steps    int           `name:"load-steps" default:"0" help:"Step pattern: levels from base to peak (default 5)."`
	Suite    string        `name:"load-suite" placeholder:"NAME" help:"Run a named sequence of patterns, one phase each, fresh events each: standard or staircase (reference: -load-suite)."`
	Limit    int           `name:"query-limit" default:"100" help:"Limit of each query filter (query and mixed loads)."`
}

func init() {
	register("load", "Open-loop load: ops at the intended times of a pattern whatever the relay answers; corrected latency, drops counted, per-second series.", &loadCmd{})
}

// patterns returns the phases to run, by name.
func (c *loadCmd) patterns() ([]string, []schedule.Pattern, error) {
	if c.Suite != "" {
		ps, err := schedule.Suite(c.Suite, c.Base, c.Peak, c.Duration)
		if err != nil {
			return nil, nil, err
		}
		var names []string
		seen := map[string]int{}
		for _, p := range ps {
			n := strings.Fields(p.String())[0]
			seen[n]++
			if seen[n] > 1 {
				n += "-" + strconv.Itoa(seen[n])
			}
			names = append(names, "load/"+n)
		}
		return names, ps, nil
	}
	sp := schedule.Spec{Pattern: c.Pattern, Duration: c.Duration, Base: c.Base, Peak: c.Peak, Period: c.Period,
		Every: c.Every, Width: c.Width, At: c.At, Steps: c.Steps, Seed: c.Seed}
	p, err := sp.Build()
	if err != nil {
		return nil, nil, err
	}
	return []string{"load"}, []schedule.Pattern{p}, nil
}

func parseMix(s string) (int, int, error) {
	a, b, ok := strings.Cut(s, ":")
	p, err1 := strconv.Atoi(strings.TrimSpace(a))
	q, err2 := strconv.Atoi(strings.TrimSpace(b))
	if !ok || err1 != nil || err2 != nil || p < 0 || q < 0 || p+q == 0 {
		return 0, 0, fmt.Errorf("--load-mix %q: want PUBLISHES:QUERIES, e.g. 4:1", s)
	}
	return p, q, nil
}

// checkFlags checks every flag, the pattern and the events it needs before
// anything starts (see flags.go).
func (c *loadCmd) checkFlags() error {
	var r ranges
	r.add(c.targetFlags.validate())
	r.add(c.corpusFlags.validate())
	r.positive("load-duration", c.Duration)
	r.add(c.loadRunFlags.validate(c.Duration))
	r.notNegative("load-period", c.Period)
	r.notNegative("load-every", c.Every)
	r.notNegative("load-width", c.Width)
	r.notNegative("load-at", c.At)
	r.min("load-steps", c.Steps, 0)
	r.memory("load-steps", c.Steps, float64(c.Steps), 64, "step")
	r.queryLimit("query-limit", c.Limit)
	r.rateMax("load-base", c.Base, true, "load-duration", c.Duration)
	r.rateMax("load-peak", c.Peak, true, "load-duration", c.Duration)
	r.add(c.outputFlags.validate())
	r.add(c.segmentFlags.validate())
	if r.err == nil {
		r.add(c.segmentFlags.loadSegmented(c.targetFlags, c.Kind))
	}
	if r.err != nil {
		return r.err
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
		if need, free := workload.FreshDiskNeed(int(n), c.Size), corpus.TempFree(); free > 0 && need > free {
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
		return fmt.Sprintf("--load-base %g", c.Base)
	}
	return fmt.Sprintf("--load-peak %g", c.Peak)
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
	names, pats, err := c.patterns()
	if err != nil {
		return loadPlan{}, err
	}
	base, err := c.options()
	return loadPlan{names, pats, base}, err
}

// options are the load options every phase shares.
func (c *loadCmd) options() (workload.LoadOptions, error) {
	pp, qp, err := parseMix(c.Mix)
	if err != nil {
		return workload.LoadOptions{}, err
	}
	return workload.LoadOptions{Base: workload.Base{Timeout: c.Timeout, Seed: c.corpusFlags.Seed},
		Kind: c.Kind, Pool: c.Pool, Connections: c.Connections, MaxLateness: c.MaxLateness, Warmup: c.Warmup,
		PublishParts: pp, QueryParts: qp, Size: c.Size,
		MaxEvents: c.MaxEvents, Limit: c.Limit,
	}, nil
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
		"pattern": c.Pattern, "duration": c.Duration.String(), "base": c.Base, "peak": c.Peak, "pool": c.Pool,
		"connections": c.Connections, "kind": c.Kind, "mix": c.Mix, "suite": c.Suite, "constraints": c.Constraints,
		"max_lateness": c.MaxLateness.String(), "warmup": c.Warmup.String(), "size": c.Size, "store": c.Store,
	}
	inst, cleanup, err := c.limitRelay(s)
	if err != nil {
		s.stop()
		return err
	}
	defer cleanup() // after finish has stopped the relay
	// --segment, --start-at: this instance's share, from a common start.
	c.segRun = runner.StartSegment(g.Ctx, s.run, s.target.URL, c.seg, c.startAt)
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
	for i, p := range lp.pats {
		if why := relayDied(inst); why != "" {
			return fmt.Errorf("%s not run: %s", lp.names[i], why)
		}
		o := lp.base
		o.Name, o.Pattern, o.Source = lp.names[i], p, source
		if !c.Quiet {
			o.Live = os.Stderr
		}
		if s.target.Probe != nil {
			o.Begin = s.target.Probe.Begin
		}
		o.Begin, o.Segment = c.segRun.Sampler(o.Begin), c.seg
		if n, _ := o.EventsNeeded(); n > 0 && !c.Quiet {
			fmt.Fprintf(os.Stderr, "%s: signing %d fresh events before the clock starts%s...\n", o.Name, n, signEstimate(ctx, keys, n, c.Size))
			o.Signed = func(n int, took time.Duration) {
				fmt.Fprintf(os.Stderr, "%s: signed %d events in %v; %s\n", o.Name, n, took.Round(time.Millisecond), p)
			}
		}
		stopProfile := startCPUProfile(o.Name)
		ph, err := workload.Load(ctx, s.target.URL, keys, o)
		stopProfile()
		c.segRun.Settle(&ph)
		if ph.Counts != nil {
			limitNotes(&ph, inst)
			s.run.Phases = append(s.run.Phases, ph)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// publishCorpus publishes the corpus (pipelined) so that queries match, and
// returns the events the relay accepted.
func (c *loadCmd) publishCorpus(ctx context.Context, s *liveSession, crp *corpus.Corpus) ([]*nostr.Event, error) {
	n := crp.Len()
	o := workload.PublishOptions{Base: workload.Base{Timeout: c.Timeout}, Connections: 4, Mode: workload.ModePipeline, Window: 256}
	o.Progress = progressFunc(s.prog)(fmt.Sprintf("Publishing %d events for the queries to match", n), int64(n))
	pr, err := workload.Publish(ctx, s.target.URL, crp, nil, o)
	if pr != nil {
		pr.Phase.Name = "publish (query corpus)"
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

// signEstimate says how long signing n events of size bytes should take
// (" (about 3m20s, 1.7 GB in /tmp)"), from signing a few hundred on all
// cores now; "" when it is quick or cannot be measured.
func signEstimate(ctx context.Context, keys *corpus.Corpus, n int64, size int) string {
	if n < 200_000 || keys == nil || len(keys.Authors) == 0 {
		return ""
	}
	const probe = 2048
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
	took := time.Duration(float64(time.Since(start)) * float64(n) / probe)
	return fmt.Sprintf(" (about %s at this machine's signing rate, %.1f GB in %s)", took.Round(time.Second), float64(workload.FreshDiskNeed(int(n), size))/1e9, os.TempDir())
}

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
	return runner.Workload{Name: "load", Run: func(ctx context.Context, env runner.Env) ([]results.Phase, error) {
		names, pats, err := c.patterns()
		if err != nil {
			return nil, err
		}
		base, err := c.options()
		if err != nil {
			return nil, err
		}
		if c.Kind != workload.LoadPublish && len(env.Live) == 0 {
			return nil, fmt.Errorf("load %s: nothing was published to query (run without --skip-publish)", c.Kind)
		}
		var phases []results.Phase
		for i, p := range pats {
			o := base
			o.Name, o.Pattern, o.Source, o.Begin = names[i], p, env.Live, env.Sample
			o.Segment = env.Segment // --segment: this instance's share of the pattern
			if n, err := o.EventsNeeded(); err != nil {
				return phases, err
			} else if c.MaxEvents > 0 && n > int64(c.MaxEvents) {
				return phases, fmt.Errorf("load %s (%s) needs %d distinct events, above --load-max-events %d", names[i], p, n, c.MaxEvents)
			}
			ph, err := workload.Load(ctx, env.URL, env.Corpus, o)
			if ph.Counts != nil {
				phases = append(phases, ph)
			}
			if err != nil {
				return phases, err
			}
		}
		return phases, nil
	}}
}
