// Package runner runs a benchmark against one relay target: the phases in
// order (publish, then query, then the others asked for), with the relay's
// resource use sampled during each, and returns one results.Run. It is the
// library entry point the CLI's run and compare commands call.
package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"github.com/relaybench/relaybench/corpus"
	"github.com/relaybench/relaybench/internal/numfmt"
	"github.com/relaybench/relaybench/internal/progress"
	"github.com/relaybench/relaybench/internal/sysinfo"
	"github.com/relaybench/relaybench/nip11"
	"github.com/relaybench/relaybench/nostr"
	"github.com/relaybench/relaybench/outcome"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/verify"
	"github.com/relaybench/relaybench/workload"
)

// Probe samples the relay's resource use during a phase. The harness's
// managed relays implement it; a plain URL has none.
type Probe interface {
	Begin() (end func() *results.Resources)
}

// Target is the relay under test.
type Target struct {
	URL     string
	Name    string // catalog name, "" for a plain URL
	Managed bool
	Build   string // what relaybench started, by its catalog ("relayer v2.2.4, eventstore v0.16.0"); "" for a plain URL
	LogFile string
	Probe   Probe // nil when the relay is not ours to observe
}

// Env is what a workload gets to run against a relay (workload.Env).
type Env = workload.Env

// Workload is one more timed workload run after publish and query (live
// traffic, open-loop load, sweeps), as workload.Decl.Workload makes it.
type Workload = workload.Workload

// Config is what to run.
type Config struct {
	// Workloads run after the publish and query phases, in order.
	Workloads   []Workload
	Publish     workload.PublishOptions
	SkipPublish bool
	Query       workload.QueryOptions
	SkipQuery   bool
	// Cores the client may use (0: all of GOMAXPROCS); used to judge whether
	// the client limited a figure.
	ClientCores int
	// Log receives the lines a workload says outside its results (a skip
	// on a relay without its NIP); nil: none.
	Log io.Writer
	// Progress makes a progress reporter for a phase (nil: none).
	Progress func(label string, total int64) func(done int64)
	// Segment runs only this instance's share of the test (--segment I/N,
	// see segment.go); the zero value runs all of it.
	Segment corpus.Segment
	// StartAt, when not zero, is the wall-clock time the first timed window
	// begins (--start-at): set-up happens before, then the run waits.
	StartAt time.Time
	// QueryAt, when not zero, is the wall-clock time the query phase
	// begins (--query-at): with segments, after all of them published.
	QueryAt time.Time
	// Waiting, when set, is told of a wait for --start-at or --query-at
	// (flag) before it begins, and the wait's end by calling done.
	Waiting func(flag string, at time.Time) (done func())
	// Started, when set, is told of the relay when its run starts, and
	// PhaseDone of each phase as it finishes (a live view shows them
	// then, not at the run's end). Both run on the run's goroutine.
	Started   func(t Target)
	PhaseDone func(t Target, phs []results.Phase)
}

// Run benchmarks target with c. It returns the measured run even when a
// phase fails or ctx is cancelled (Ctrl-C): the error says why it stopped.
func Run(ctx context.Context, c *corpus.Corpus, cfg Config, t Target) (results.Run, error) {
	r := &relayRun{ctx: ctx, c: c, cfg: cfg, t: t}
	if cfg.Started != nil {
		cfg.Started(t)
	}
	r.header()
	r.skipPublishForNothing()
	r.heldBefore()
	r.gate = r.cfg.segmentSetup(ctx, &r.run, t.URL)
	defer r.gate.finish(&r.run)
	check := relayDied(t)
	r.died = func(run *results.Run) error {
		if ctx.Err() != nil {
			return nil // stopped by the user: no waiting to see whether the relay died
		}
		return check(run)
	}
	// Stopped by the user before the query phase: what was asked for and
	// not started is booked cancelled. The workloads book their own stop.
	for _, step := range []func() error{r.publish, r.materialize, r.query} {
		if ctx.Err() != nil {
			return cancelRest(ctx, r.run, r.cfg)
		}
		if err := step(); err != nil {
			if errors.Is(err, errCancelled) {
				return cancelRest(ctx, r.run, r.cfg)
			}
			return r.run, err
		}
	}
	if err := r.workloads(); err != nil {
		return r.run, err
	}
	return r.run, ctx.Err()
}

// errCancelled says a step stopped because the user did: what was asked
// for and not started is booked as cancelled (cancelRest).
var errCancelled = errors.New("cancelled")

// relayRun is one Run in progress: the phases in order, over one relay.
type relayRun struct {
	ctx   context.Context
	c     *corpus.Corpus
	cfg   Config
	t     Target
	run   results.Run
	info  *nip11.Info
	gate  *startGate
	died  func(*results.Run) error
	model *verify.Model
}

// header describes the relay and the corpus, and reads the relay's NIP-11
// document.
func (r *relayRun) header() {
	c, t := r.c, r.t
	r.run = results.Run{
		Relay: results.Relay{Name: t.Name, URL: t.URL, Managed: t.Managed, Build: t.Build, LogFile: t.LogFile},
		Corpus: results.Corpus{
			Seed: c.Params.Seed, Events: c.Len(), Authors: len(c.Authors), AvgSize: c.Params.AvgSize,
			Bytes: c.Bytes, Key: c.Key, Cached: c.Cached, SignSecs: c.SignDuration.Seconds(), Anchor: c.Params.Anchor,
		},
	}
	describeDump(&r.run, c)
	if r.info = FetchInfo(r.ctx, t.URL, &r.run); r.info != nil {
		limitNotes(&r.run, c, r.info)
	}
}

// FetchInfo reads the NIP-11 document of the relay at url (a 5-second
// limit) into run's relay and returns it; a relay without one gets a note
// in run and nil.
func FetchInfo(ctx context.Context, url string, run *results.Run) *nip11.Info {
	ictx, cancel := context.WithTimeout(ctx, 5*time.Second)
	info, raw, err := nip11.Fetch(ictx, url)
	cancel()
	if err != nil {
		run.Notes = append(run.Notes, "no NIP-11 document: "+err.Error())
		return nil
	}
	run.Relay.NIP11 = raw
	run.Relay.Software = info.Software
	run.Relay.Version = info.Version
	run.Relay.MaxLimit = info.Limitation.MaxLimit
	return info
}

// skipPublishForNothing leaves the publish phase out when nothing after it
// can run on this relay (each workload needs a NIP it does not announce).
func (r *relayRun) skipPublishForNothing() {
	cfg := &r.cfg
	if cfg.SkipPublish || !cfg.SkipQuery || len(cfg.Workloads) == 0 {
		return
	}
	var why []string
	for _, w := range cfg.Workloads {
		if w.Unsupported == nil {
			return
		}
		reason := w.Unsupported(r.info)
		if reason == "" {
			return
		}
		why = append(why, w.Name+": "+strings.TrimPrefix(reason, "skipped: "))
	}
	cfg.SkipPublish = true
	r.run.Notes = append(r.run.Notes, "corpus not published: no workload of this run can run on this relay ("+strings.Join(why, "; ")+")")
}

// publish runs the publish phase (unless skipped) and builds the model of
// what the relay accepted, when something after it needs one.
func (r *relayRun) publish() error {
	ctx, c, cfg, t := r.ctx, r.c, &r.cfg, r.t
	if cfg.SkipPublish {
		return nil
	}
	var all []int // nil: every event in order (no index list of 8 B per event)
	nPub := c.Len()
	if !cfg.Segment.Whole() {
		all = cfg.Segment.Indexes(c.Len())
		nPub = len(all)
	}
	po := cfg.Publish
	cfg.segmentPublish(&po)
	if cfg.Progress != nil {
		po.Progress = cfg.Progress(progress.Counting(fmt.Sprintf("Publishing %s to %s", numfmt.Count(nPub, "event"), t.URL), "Published", "event", "events", int64(nPub)), int64(nPub))
	}
	po.Begin = r.gate.sampler(sampler(t.Probe))
	pr, err := workload.Publish(ctx, t.URL, c, all, po)
	if pr != nil {
		cfg.segmentStored(pr, c.Len())
		r.gate.settle(&pr.Phase)
		finish(&pr.Phase, cfg.ClientCores)
		r.keep(pr.Phase)
		if ctx.Err() == nil && (!cfg.SkipQuery || len(cfg.Workloads) > 0) {
			if merr := r.buildModel(pr); merr != nil {
				return merr
			}
		}
	}
	switch {
	case ctx.Err() != nil:
		return errCancelled
	case err != nil:
		return fmt.Errorf("publish: %w", err)
	}
	return r.died(&r.run)
}

// buildModel builds the model of what the relay accepted. Only what
// follows needs it: a publish-only run of a streamed corpus never parses
// its events, nor a cancelled run, where nothing follows.
func (r *relayRun) buildModel(pr *workload.PublishResult) error {
	c, cfg := r.c, &r.cfg
	if c.Streamed() && (len(cfg.Workloads) > 0 || (!cfg.SkipQuery && !cfg.Segment.Whole())) {
		// Events will be needed below: parse them once, the model shares
		// them.
		if err := c.Materialize(); err != nil {
			return err
		}
	}
	var err error
	r.model, err = buildModel(c, pr)
	if r.model != nil {
		r.model.Prior = priorData(r.run.Relay.Before)
	}
	return err
}

// heldBefore asks the relay, before anything is published and before a
// segment's start gate, whether it holds events already (Relay.Before),
// and says in a note what that changes. Not asked when nothing is judged
// against what the run published: it publishes nothing (--skip-publish),
// or neither queries nor runs workloads; nor once the user stopped it.
func (r *relayRun) heldBefore() {
	if r.ctx.Err() != nil || r.cfg.SkipPublish || (r.cfg.SkipQuery && len(r.cfg.Workloads) == 0) {
		return
	}
	timeout := workload.BeforeTimeout
	if qt := r.cfg.Query.Timeout; qt > 0 {
		timeout = min(timeout, qt) // no longer than a query may take
	}
	state, why := workload.HeldBefore(r.ctx, r.t.URL, timeout)
	if r.ctx.Err() != nil {
		return // stopped by the user meanwhile: nothing learnt
	}
	r.run.Relay.Before = state
	if n := BeforeNote(state, why); n != "" {
		r.run.Notes = append(r.run.Notes, n)
	}
}

// priorData says whether answers may hold the relay's earlier data, by
// what it held when the run began: anything but "empty" (and "", a file
// or a run that did not ask).
func priorData(before string) bool {
	return before == results.BeforeHeld || before == results.BeforeUnknown
}

// BeforeNote is the run's note on what the relay held when it began ("" when
// it held nothing or was not asked).
func BeforeNote(state, why string) string {
	const judged = "events in answers that this run never published are judged the relay's earlier data (stored), not extra; a relay that invents events is caught only when it is empty at the start"
	switch state {
	case results.BeforeHeld:
		return "the relay held events before this run (" + why + "): " + judged
	case results.BeforeUnknown:
		return "whether the relay held events before this run is unknown (" + why + "): " + judged
	}
	return ""
}

// materialize parses a streamed corpus when the queries drawn from it or
// the workloads read its events.
func (r *relayRun) materialize() error {
	cfg := &r.cfg
	if r.c.Streamed() && ((!cfg.SkipQuery && (r.model == nil || !cfg.Segment.Whole())) || len(cfg.Workloads) > 0) {
		return r.c.Materialize()
	}
	return nil
}

// query runs the query phase (unless skipped), drawn from what the relay
// accepted.
func (r *relayRun) query() error {
	ctx, c, cfg, t, model := r.ctx, r.c, &r.cfg, r.t, r.model
	if cfg.SkipQuery {
		return nil
	}
	if model != nil && len(model.Live) == 0 && cfg.Segment.Whole() {
		// Nothing to query: every query is not run, and the account says why.
		r.keep(notRunPhase("query", "query", cfg.Query.Queries, "the relay accepted none of the published events"))
		return nil
	}
	qo := cfg.Query
	if qo.RelayCap == 0 {
		qo.RelayCap = r.run.Relay.MaxLimit
	}
	if cfg.Progress != nil {
		qo.Progress = cfg.Progress(progress.Counting(fmt.Sprintf("Querying events from %s", t.URL), "Executed", "query", "queries", int64(qo.Queries)), int64(qo.Queries))
	}
	source := c.Events
	if model != nil {
		source = model.Live
	}
	qmodel := model
	if !cfg.Segment.Whole() {
		source, qmodel = cfg.segmentQuery(&qo, c, model != nil), nil
	}
	qgate := cfg.queryGate(ctx, &r.run)
	qo.Begin = r.gate.sampler(qgate.sampler(sampler(t.Probe)))
	ph, err := workload.Query(ctx, t.URL, qmodel, source, qo)
	qgate.finish(&r.run)
	cfg.segmentQueryNote(&ph, model != nil)
	r.gate.settle(&ph)
	qgate.settle(&ph)
	finish(&ph, cfg.ClientCores)
	if ph.Name != "" {
		r.keep(ph)
	}
	if err != nil {
		return fmt.Errorf("query: %w", err)
	}
	return r.died(&r.run)
}

// keep adds finished phases to the run and tells Config.PhaseDone.
func (r *relayRun) keep(phs ...results.Phase) {
	r.run.Phases = append(r.run.Phases, phs...)
	if r.cfg.PhaseDone != nil && len(phs) > 0 {
		r.cfg.PhaseDone(r.t, phs)
	}
}

// workloads runs the workloads asked for, in order, until the user stops
// the run.
func (r *relayRun) workloads() error {
	ctx, cfg, t := r.ctx, &r.cfg, r.t
	env := Env{URL: t.URL, Corpus: r.c, Info: r.info, Progress: cfg.Progress, Segment: cfg.Segment, Log: cfg.Log}
	if env.Progress == nil {
		env.Progress = func(string, int64) func(int64) { return func(int64) {} }
	}
	if r.model != nil {
		env.Live, env.Model = r.model.Live, r.model
		cfg.segmentEnv(&env, r.c)
	}
	for _, w := range cfg.Workloads {
		if ctx.Err() != nil {
			break
		}
		phases, err := RunWorkload(ctx, w, env, r.gate.probe(t.Probe), cfg.ClientCores)
		r.keep(phases...)
		if derr := r.died(&r.run); derr != nil {
			return derr
		}
		if err != nil {
			return fmt.Errorf("%s: %w", w.Name, err)
		}
	}
	return nil
}

// buildModel builds the model of what the relay stored after publishing
// (storedModel; a test counts the calls).
var buildModel = storedModel

// storedModel is the verification model of the events the relay stored
// (accepted, or refused as duplicates), parsed from a streamed corpus, with
// those sent without a decisive answer as unknown (neither owed nor
// forbidden in any later answer).
func storedModel(c *corpus.Corpus, pr *workload.PublishResult) (*verify.Model, error) {
	var acc, unknown []*nostr.Event
	var refused []string
	err := c.Scan(func(i int, e *nostr.Event) error {
		switch o := pr.Outcomes[i]; {
		case o == workload.Accepted || o == workload.Duplicate:
			acc = append(acc, e)
		case workload.Undecided(o):
			unknown = append(unknown, e)
		case o == workload.Refused:
			refused = append(refused, e.ID)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	m := verify.NewModelUnknown(acc, unknown)
	m.SetRefused(refused) // never the relay's earlier data
	return m, nil
}

// RelayDied is relayDied, for commands that run workloads themselves.
func RelayDied(t Target) func(run *results.Run) error { return relayDied(t) }

// relayDied returns a check, run after each phase, that fails when a relay
// relaybench started has exited on its own: the last phase is marked as
// stopped by the relay's death and the run goes no further.
func relayDied(t Target) func(run *results.Run) error {
	p, ok := t.Probe.(interface {
		Exited() <-chan struct{}
		ExitErr() error
	})
	if !ok {
		return func(*results.Run) error { return nil }
	}
	return func(run *results.Run) error {
		select {
		case <-p.Exited():
		default:
			// Connections lost in the last phase, or the phase stopped
			// early: a relay that crashed may not have been reaped yet (an
			// abort writing its core takes a moment, a loaded machine
			// schedules its parent late). Give it a little time, so its
			// death is reported as the cause rather than only the lost
			// connections or the stop.
			if n := len(run.Phases); n == 0 || (!lostConns(run.Phases[n-1]) && run.Phases[n-1].Aborted == "") {
				return nil
			}
			t := time.NewTimer(2 * time.Second)
			defer t.Stop()
			select {
			case <-p.Exited():
			case <-t.C:
				return nil
			}
		}
		why := "the relay process exited"
		if err := p.ExitErr(); err != nil {
			why += ": " + err.Error()
		}
		if n := len(run.Phases); n > 0 && run.Phases[n-1].Aborted == "" {
			run.Phases[n-1].Aborted = why
		}
		return fmt.Errorf("relay died: %s", why)
	}
}

// lostConns reports whether a phase lost connections.
func lostConns(ph results.Phase) bool {
	for _, a := range ph.Accounts {
		if a.ConnLost > 0 {
			return true
		}
	}
	return false
}

// cancelRest ends a run the user stopped (signal) after publishing, or
// while it published: nothing that follows starts, and nothing that grows
// with the corpus (parsing it, the model, the queries drawn from it) is
// done, so that the process saves what it measured and exits at once,
// whatever the corpus size. What was asked for and not started is booked
// as cancelled.
func cancelRest(ctx context.Context, run results.Run, cfg Config) (results.Run, error) {
	if !cfg.SkipQuery {
		run.Phases = append(run.Phases, cancelledPhase("query", "query", results.OpQuery, cfg.Segment.Share(cfg.Query.Queries)))
	}
	for _, w := range cfg.Workloads {
		run.Phases = append(run.Phases, notStarted(w.Name))
	}
	return run, ctx.Err()
}

// cancelledPhase is a phase of n operations op the user stopped before it
// started: each booked cancelled, never blamed on the relay.
func cancelledPhase(name, kind, op string, n int) results.Phase {
	l := outcome.New(op, int64(n))
	l.Settle(outcome.Cancelled, "")
	ph := results.NewPhase(name, kind)
	ph.Accounts, ph.Notes = []results.Account{l.Result()}, []string{"cancelled by the user before the phase started"}
	return ph
}

// notStarted is the phase of a workload the user stopped before it started.
func notStarted(name string) results.Phase {
	ph := results.NewPhase(name, name)
	ph.Aborted = "interrupted before it started: cancelled by the user, nothing of it ran"
	return ph
}

// notRunPhase is a phase none of whose n operations could run, with why.
func notRunPhase(name, kind string, n int, why string) results.Phase {
	l := outcome.New(results.OpQuery, int64(n))
	l.Settle(outcome.NotRun, why)
	ph := results.NewPhase(name, kind)
	ph.Accounts, ph.Notes = []results.Account{l.Result()}, []string{"not run: " + why}
	return ph
}

// RunWorkload runs w, giving it the probe's sampler (env.Sample) to sample
// the relay's resources over each phase's timed window; a phase the
// workload did not sample gets a note saying so. Every phase's client CPU is
// then judged.
func RunWorkload(ctx context.Context, w Workload, env Env, probe Probe, clientCores int) ([]results.Phase, error) {
	var sampled atomic.Bool
	if begin := sampler(probe); begin != nil {
		env.Sample = func() func() *results.Resources {
			sampled.Store(true)
			return begin()
		}
	}
	var phases []results.Phase
	var err error
	switch {
	case ctx.Err() != nil:
		// Stopped before it started: no corpus-sized parsing for nothing.
	case env.Corpus != nil:
		// Workloads index Corpus.Events: a streamed corpus is parsed now.
		if err := env.Corpus.Materialize(); err != nil {
			return nil, err
		}
		fallthrough
	default:
		phases, err = w.Run(ctx, env)
	}
	if len(phases) == 0 && ctx.Err() != nil {
		// Stopped by the user before it measured anything: say so, so the
		// results show the workload was asked for and cancelled.
		phases = []results.Phase{notStarted(w.Name)}
		err = ctx.Err()
	}
	for i := range phases {
		ph := &phases[i]
		if env.Sample != nil && !sampled.Load() && ph.Duration > 0 {
			ph.Notes = append(ph.Notes, "the relay's resources were not sampled: the workload did not start the sampling at its clock")
		}
		finish(ph, clientCores)
	}
	return phases, err
}

// sampler is p's sampler (nil without a probe).
func sampler(p Probe) workload.Sampler {
	if p == nil {
		return nil
	}
	return p.Begin
}

// finish judges whether the client limited the phase's figure; the phase's
// resources are the workload's, sampled over its timed window.
func finish(ph *results.Phase, clientCores int) {
	if ph.Resources == nil {
		ph.Resources = &results.Resources{}
	}
	judgeClient(ph, clientCores)
}

// cpuTick is the coarsest step of the CPU clocks a phase's figures come
// from: /proc/PID/stat counts the relay's CPU in USER_HZ ticks, 100 a
// second on Linux, and getrusage's total for the client advances with the
// scheduler tick (HZ ≥ USER_HZ) for each running thread. Over a window of
// w seconds one tick moves a figure by cpuTick/w cores.
const cpuTick = 10 * time.Millisecond

// minJudgedPhase is the shortest timed window whose CPU figures are judged:
// the judgement's margins are a tenth of the cores (0.9 of them busy), at
// least 0.1 core, so one tick must move a figure by no more than 0.1 core:
// ten ticks. A 4 ms phase whose relay used one tick reads 2.5 cores.
const minJudgedPhase = 10 * cpuTick

// judgeClient marks a phase client-limited when the client used (nearly) all
// the CPU it may use, or when the machine was saturated and the client used
// at least as much of it as the relay; otherwise it notes which side, if
// any, was CPU-bound, so that every figure says what limited it. A phase
// shorter than minJudgedPhase is not judged: its note says so.
func judgeClient(ph *results.Phase, clientCores int) {
	noteSetup(ph)
	if ph.Duration <= 0 || ph.Resources == nil {
		return
	}
	cores := float64(runtime.GOMAXPROCS(0))
	if clientCores > 0 {
		cores = float64(clientCores)
	}
	secs := float64(ph.Duration) / 1e9
	ph.Resources.ClientCPUUtil = ph.Resources.ClientCPUSecs / secs / cores
	f := cpuFigures(ph)
	client, relay := f.client, f.relay // cores busy
	machine := float64(runtime.NumCPU())
	note := func(format string, a ...any) { ph.Notes = append(ph.Notes, fmt.Sprintf(format, a...)) }
	switch {
	case ph.ClientLimited:
		// the workload already found the client to be the limit
	case ph.Workload == "load":
		// load judged what limited it from its own evidence (lateness,
		// slots, both sides' CPU and the machine's load): a second note
		// would repeat the CPU figures and the machine's load
	case f.ns < int64(minJudgedPhase):
		note("too short to judge what limited it: %s %s is under %d ms, ten ticks of the %d ms CPU clocks, so its CPU figures are tick noise (one tick is %.2f cores here)",
			f.window, numfmt.Dur(time.Duration(f.ns)), minJudgedPhase.Milliseconds(), cpuTick.Milliseconds(), cpuTick.Seconds()/(float64(f.ns)/1e9))
	case client >= 0.9*cores:
		ph.ClientLimited = true
		note("client-limited: the client kept %.2f of its %.0f cores busy%s; the relay may be faster than this figure", client, cores, f.during)
	case relay <= 0 && ph.Resources.RelayPeakRSS == 0:
		note("client CPU: %.2f cores busy%s (relay CPU unknown: relaybench did not start this relay)", client, f.during)
	case relay <= 0:
		note("client CPU: %.2f cores busy%s; the relay's CPU time rounded to zero in this phase (the kernel counts it in 10 ms ticks)", client, f.during)
	case client+relay >= 0.9*machine && client >= relay:
		ph.ClientLimited = true
		note("client-limited: the machine's %.0f cores were saturated (client %.2f, relay %.2f cores%s) and the client used at least as much as the relay; pin them apart (--client-cpus/--relay-cpus) or use a bigger machine", machine, client, relay, f.during)
	case client+relay >= 0.9*machine:
		note("relay-limited, machine saturated: client %.2f + relay %.2f cores of %.0f%s; the relay had less CPU than it would alone%s", client, relay, machine, f.during, machineLoad(client+relay))
	case relay >= 0.75:
		note("relay-limited: the relay kept %.2f cores busy%s while the client had spare CPU (%.2f of %.0f cores)%s", relay, f.during, client, cores, relayWaited(client+relay))
	default:
		note("neither side saturated its CPU (client %.2f, relay %.2f cores, %s): %s%s", client, relay, f.over, f.tail, othersBusy(client+relay))
	}
}

// phaseCPU is what judgeClient judges: the cores each side kept busy over
// a stretch of ns nanoseconds, with the words that say which.
type phaseCPU struct {
	client, relay float64
	ns            int64
	window        string // "the timed window of"
	during        string // appended to a figure: "" or " during the bursts"
	over          string // "averages over the timed window"
	tail          string // what the figures are bounded by when neither side was busy
}

// cpuFigures are a phase's CPU figures: a burst phase's during its bursts
// themselves (process CPU time read at each burst's start and at its last
// answer), which the idle time between bursts would dilute in an average
// over the timed window; other phases' averages over that window.
func cpuFigures(ph *results.Phase) phaseCPU {
	if c, ok := ph.Rates[workload.RateBurstClientCores]; ok && ph.Counts[workload.CountBurstCPUTime] > 0 {
		ns := ph.Counts[workload.CountBurstCPUTime]
		return phaseCPU{client: c, relay: ph.Rates[workload.RateBurstRelayCores], ns: ns,
			window: "the bursts' time of", during: " during the bursts",
			over: fmt.Sprintf("during the bursts: CPU time read at each burst's start and at its last answer, %s in all", numfmt.Dur(time.Duration(ns))),
			tail: "not CPU-bound while the bursts were sent and answered; the figures are bounded by round trips and waits"}
	}
	secs := float64(ph.Duration) / 1e9
	return phaseCPU{client: ph.Resources.ClientCPUSecs / secs, relay: ph.Resources.RelayCPUSecs / secs, ns: ph.Duration,
		window: "the timed window of", over: "averages over the timed window",
		tail: "not CPU-bound on average; the figures are bounded by round trips and waits, or by the schedule of a paced workload, and a burst may still have kept a side busy for its moments"}
}

// machineOthersBusy is sysinfo.OthersBusy (a test sets the machine's load).
var machineOthersBusy = sysinfo.OthersBusy

// othersBusy says, when the machine's load average is above what the two
// sides account for by at least one core, that other processes competed
// for the cores (their CPU is counted on neither side); "" otherwise.
func othersBusy(sides float64) string {
	if s := machineOthersBusy(sides); s != "" {
		return "; " + s
	}
	return ""
}

// machineLoad ends a judgement with the machine's load: othersBusy's
// clause when other processes competed for the cores, else the load
// average alone (sysinfo.LoadClause); "" when unknown.
func machineLoad(sides float64) string {
	if s := othersBusy(sides); s != "" {
		return s
	}
	if la := machineLoadClause(); la != "" {
		return "; " + la
	}
	return ""
}

// machineLoadClause is sysinfo.LoadClause (a test sets the machine's load).
var machineLoadClause = sysinfo.LoadClause

// relayWaited ends a relay-limited judgement made while other processes
// competed for the machine's cores (othersBusy): the relay kept its cores
// busy, but on such a machine it may also have waited for a CPU, which
// its figures cannot tell from being slow; "" on a machine not so busy.
func relayWaited(sides float64) string {
	if s := othersBusy(sides); s != "" {
		return ", but it may have waited for a CPU rather than been slow" + s
	}
	return ""
}

// noteSetup names a long set-up (dialling, subscribing) before the phase's
// clock: at least half a second, or a tenth of the timed window.
func noteSetup(ph *results.Phase) {
	secs := float64(ph.Duration) / 1e9
	if ph.SetupSecs < 0.5 && (secs <= 0 || ph.SetupSecs < secs/10) || ph.SetupSecs < 0.05 {
		return
	}
	n := fmt.Sprintf("set-up before the clock started took %v (dialling connections, opening subscriptions): not timed, not in the rates or the resources", numfmt.Dur(time.Duration(ph.SetupSecs*float64(time.Second))))
	for _, old := range ph.Notes {
		if old == n {
			return
		}
	}
	ph.Notes = append(ph.Notes, n)
}
