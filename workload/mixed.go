package workload

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/relaybench/relaybench/corpus"
	"github.com/relaybench/relaybench/flagcheck"
	"github.com/relaybench/relaybench/internal/mono"
	"github.com/relaybench/relaybench/internal/numfmt"
	"github.com/relaybench/relaybench/metrics"
	"github.com/relaybench/relaybench/nostr"
	"github.com/relaybench/relaybench/outcome"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/schedule"
	"github.com/relaybench/relaybench/verify"
	"github.com/relaybench/relaybench/wire"
)

func init() {
	Declare[MixedOptions](Decl{Name: "mixed", Input: NeedsCorpus, Adds: true,
		Summary: "Publishers and queriers at once, each at its own rate, compared with each side alone."})
}

// MixedOptions configure the mixed read/write workload. Base's Timeout
// bounds the wait for an OK and for an EOSE.
type MixedOptions struct {
	Base        `set:"timeout=10s" set:"timeout_help=How long an EVENT may wait for its OK, and a REQ for its EOSE."`
	Duration    time.Duration `default:"10s" help:"Length of each part: publish alone, query alone, then both together."`
	PublishRate float64       `name:"publish-rate" default:"1000" help:"Total fresh events/s, open loop."`
	QueryRate   float64       `name:"query-rate" default:"50" help:"Total queries/s, open loop."`
	Publishers  int           `default:"2" help:"Publisher connections."`
	Queriers    int           `default:"2" help:"Query connections (one REQ at a time each)."`
	Window      int           `default:"1024" help:"Unacknowledged EVENTs allowed per publisher."`
	Limit       int           `name:"query-limit" default:"100" help:"Limit of each query filter."`
	// Size is the content bytes of the fresh events (the CLI's --size, the
	// corpus's).
	Size     int `kong:"-" default:"1024"`
	RelayCap int `kong:"-"` // NIP-11 limitation.max_limit (0: env's)
	// Source holds the events query filters are drawn from: events the
	// relay holds (default: env's Live, else the corpus, which the caller
	// publishes first).
	Source []*nostr.Event `kong:"-"`
	// Parts receives the name of each part as it starts (nil: a line on
	// env's Log).
	Parts func(part string) `kong:"-"`

	progressFor func(label string, total int64) func(done int64) // env's progress reporters (nil: none)
	settle      bool                                             // wait for the relay's CPU to settle before the first part (settleRelay)
}

// Run runs the mixed workload on env's relay: fresh events signed by env's
// corpus keys, queries drawn from what it holds.
func (o MixedOptions) Run(ctx context.Context, env Env) ([]results.Phase, error) {
	applyDefaults(&o)
	o.fromEnv(env, "", 0)
	o.progressFor = env.Progress
	if o.Source == nil {
		o.Source = env.source()
	}
	if o.RelayCap == 0 {
		o.RelayCap = env.relayCap()
	}
	if o.Parts == nil && env.Log != nil {
		o.Parts = func(part string) { fmt.Fprintln(env.Log, mixedPartLine(part, o)) }
	}
	// After a preload the relay may still be busy with its tail: wait for
	// its CPU to settle (not under a segment, whose parts start together).
	o.settle = env.Live != nil && env.Segment.Whole()
	return onePhase(Mixed(ctx, env.URL, env.Corpus, o))
}

// mixedReadBackPart is the name of the untimed read-back after the parts.
const mixedReadBackPart = "read-back"

// mixedPartLine is the progress line of a part as it starts: the three
// timed parts with their duration; the read-back, which has none (it asks
// for every accepted event by id until done, each REQ within --timeout),
// says so.
func mixedPartLine(part string, o MixedOptions) string {
	if part == mixedReadBackPart {
		return fmt.Sprintf("mixed: %s (not timed: every accepted event by id, each REQ within %v)", part, o.Timeout)
	}
	return fmt.Sprintf("mixed: %s (%v)", part, o.Duration)
}

// Mixed runs publishers and queriers at once, each open loop at its own
// rate, after running each side alone for the same duration as a baseline.
// It reports both sides' throughput and latency alone and together (Groups
// "publish/alone", "query/alone", "publish/together", "query/together") and
// the ratios together/alone.
//
// Every EVENT and every REQ ends in one outcome, in the phase's event and
// query accounts (summed over the parts; each group carries its part's
// split). Answers to queries issued while events arrive are checked for
// validity, filter match and duplicates (what they should hold changes as
// they run). Missing events are caught after the publishers stop: every
// event the relay accepted is read back by id (a "read" account) and
// checked against the accepted set, so a relay that loses events fails
// verification.
func Mixed(ctx context.Context, url string, c *corpus.Corpus, o MixedOptions) (results.Phase, error) {
	applyDefaults(&o)
	e, err := newMixedEnv(ctx, url, c, &o)
	if err != nil {
		return results.Phase{}, err
	}
	ph := results.NewPhase("mixed", "mixed")
	defer e.close()
	settled := ""
	if o.settle {
		settled, e.relaySettled = settleRelay(ctx, o.Begin, settleStep) // after signing and dialling: right before the first part
	}
	var parts []*mixedPart
	specs := []mixedSpec{{"publish/alone", true, false, 0}, {"query/alone", false, true, 0}, {"together", true, true, e.perPart}}
	mp := e.startProgress(specs) // the whole plan, before the first part
	for _, spec := range specs {
		if ctx.Err() != nil || mixedAborted(parts) != "" {
			parts = append(parts, e.skipPart(ctx, spec, mixedAborted(parts)))
		} else {
			parts = append(parts, e.runPart(ctx, spec, mp))
		}
		mp.partOver(e.mixedPlanned(spec))
	}
	rb := e.readBack(ctx, parts, mp)
	mp.partOver(mp.readBack) // the REQs it sent and those it did not need
	mp.done()
	buildMixedPhase(ctx, &ph, e, parts, rb)
	mixedWindows(&ph, e.setup, parts)
	if settled != "" {
		ph.Notes = append(ph.Notes, settled)
	}
	return ph, ctx.Err()
}

// mixedEnv is what every part uses: the fresh events, the filters' source
// and the connections (a lost one is redialed before the next part).
type mixedEnv struct {
	o        *MixedOptions
	url      string
	b        *shapeBuilder
	fresh    *Fresh
	perPart  int          // events scheduled per publishing part
	nQ       int          // queries scheduled per querying part
	pub      *connSet     // the publishers' connections
	q        *connSet     // the queriers'
	pubConns []*wire.Conn // this part's (pub.refresh before each)
	qConns   []*wire.Conn
	setup    int64 // mono: when the dialling began
	// relaySettled: the settle wait saw the relay's CPU settle after the
	// preload (firstSecondNote then names other causes than its tail)
	relaySettled bool
}

func newMixedEnv(ctx context.Context, url string, c *corpus.Corpus, o *MixedOptions) (*mixedEnv, error) {
	e := &mixedEnv{o: o, url: url}
	source := o.Source
	if len(source) == 0 {
		source = c.Events
	}
	var err error
	if e.b, err = newShapeBuilder(source, o.Limit, o.Seed); err != nil {
		return nil, err
	}
	e.perPart = max(1, int(o.PublishRate*o.Duration.Seconds()))
	e.nQ = max(1, int(o.QueryRate*o.Duration.Seconds()))
	nonce := RunNonce()
	if e.fresh, err = NewFresh(ctx, c, FreshSpec{Count: 2 * e.perPart, Size: o.Size, Seed: o.Seed, Channels: ChannelNames(o.Seed, nonce, 4)}, nonce); err != nil {
		return nil, err
	}
	e.setup = mono.Now()
	if e.pub, err = dialSet(ctx, url, o.Publishers, e.pubDial()); err != nil {
		return nil, fmt.Errorf("publishers: %w", err)
	}
	if e.q, err = dialSet(ctx, url, o.Queriers, o.Dial); err != nil {
		e.pub.close()
		return nil, fmt.Errorf("queriers: %w", err)
	}
	e.pubConns, e.qConns = e.pub.refresh(ctx), e.q.refresh(ctx)
	return e, nil
}

func (e *mixedEnv) pubDial() wire.Options {
	d := e.o.Dial
	d.OKTimeout = e.o.Timeout
	return d
}

func (e *mixedEnv) close() { e.pub.close(); e.q.close() }

// filters draws the part's queries, cycling through the shapes.
func (e *mixedEnv) filters() []*queryRecord {
	recs := make([]*queryRecord, 0, e.nQ)
	for i := 0; len(recs) < e.nQ && i < e.nQ*4; i++ {
		shape := Shapes[i%len(Shapes)]
		if f, ok := e.b.build(shape); ok {
			recs = append(recs, &queryRecord{shape: shape, filter: f})
		}
	}
	return recs
}

// mixedSpec names a part and what runs in it.
type mixedSpec struct {
	name       string
	pub, query bool
	first      int // first fresh event number it publishes
}

// mixedPart is what one part measured.
type mixedPart struct {
	mixedSpec
	ran                  bool
	start, end           int64
	pub                  *results.Phase // publishing side (nil: none)
	okHist               *metrics.Histogram
	accepted             []int // fresh event numbers the relay accepted
	recs                 []*queryRecord
	qOffs                []int64         // each query's intended time from start
	qled                 *outcome.Ledger // the part's queries (nil: none)
	qwd                  *outcome.Watchdog
	eose, eoseInt, first *metrics.Histogram
	lateQueries          int64
	overAnswers          []overLimitAnswer // answers beyond their limit while this part published
	overLive             int64             // of their excess, events still being published (mixedlimit.go)
	cpu                  time.Duration
	relay                *results.Resources // over the part's timed window (nil: not observed)
	others               float64            // cores other processes kept busy over the part (-1: unknown; mixedmachine.go)
	busy                 *machineEvidence   // other processes competed for the cores over the part (nil: not known to; mixedunsent.go)
	skipped              []results.Account  // work of a part not run
}

// runPart runs one part: the publishers and/or the queriers, each on its
// own schedule from the part's start, for o.Duration.
func (e *mixedEnv) runPart(ctx context.Context, spec mixedSpec, mp *mixedProgress) *mixedPart {
	o := e.o
	if o.Parts != nil {
		o.Parts(spec.name)
	}
	p := &mixedPart{mixedSpec: spec, ran: true, eose: metrics.NewHistogram(), eoseInt: metrics.NewHistogram(), first: metrics.NewHistogram()}
	e.pubConns, e.qConns = e.pub.refresh(ctx), e.q.refresh(ctx) // the connections lost in the part before
	qctx := ctx
	if spec.query {
		p.recs = e.filters()
		p.qOffs = schedule.ConstantTimes(0, o.QueryRate, len(p.recs))
		p.qled = outcome.New(results.OpQuery, int64(e.nQ))
		p.qled.AddN(outcome.NotRun, "no filter could be drawn from the events", int64(e.nQ-len(p.recs)))
		qctx, p.qwd = outcome.NewWatchdog(ctx, 3, "queries ended without EOSE (timed out or connection lost)")
		defer p.qwd.Stop()
	}
	mp.begin(p)
	w := o.open(0) // each part's own window; the phase joins them (mixedWindows)
	p.start = w.Start
	ticks := readCPUTicks()
	stopAt := p.start + int64(o.Duration)
	var wg sync.WaitGroup
	var okRecv []int64 // by fresh number: when its OK was read
	if spec.pub {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.pub, p.okHist, p.accepted, okRecv = mixedPublish(ctx, e.pubConns, e.fresh, spec.first, e.perPart, *o, p.start, stopAt, mp.publishing)
		}()
	}
	if spec.query {
		var mu sync.Mutex
		for q := range e.qConns {
			wg.Add(1)
			go func() { defer wg.Done(); e.querier(ctx, qctx, p, q, &mu) }()
		}
	}
	wg.Wait()
	if p.qwd != nil {
		p.qwd.Settle(p.qled, outcome.WhyConnGone)
	}
	if spec.name == "publish/alone" && p.pub != nil && p.okHist != nil && p.okHist.Count() > 0 {
		if n := slowSecondNote(p.pub.Series, p.okHist.Quantile(99), e.relaySettled); n != "" {
			p.pub.Notes = append(p.pub.Notes, n)
		}
	}
	p.overLive = stillPublishing(p.overAnswers, okRecv)
	end := mono.Now()
	if p.pub != nil {
		end = max(end, p.start+p.pub.Duration)
	}
	w.Close(end)
	p.end, p.cpu, p.relay = w.End, w.CPU(), w.smp.relay
	p.others = -1
	if v, ok := othersCores(ticks, readCPUTicks(), p.cpu.Seconds(), p.relay, w.Secs()); ok {
		p.others = v
	}
	if p.pub != nil { // the events left unsent at its end, by who held them back (mixedunsent.go)
		p.busy = p.partBusy()
		p.judgeUnsent(e.perPart, p.busy.over("the part"))
	}
	return p
}

// mixedWindows sets the phase's set-up time (dialling, and the gaps between
// the parts) and joins the parts' relay resources: the phase's timed window
// is the three parts end to end, and so is its resource series.
func mixedWindows(ph *results.Phase, setup int64, parts []*mixedPart) {
	var wins []window
	prev := setup
	for _, p := range parts {
		if !p.ran {
			continue
		}
		ph.SetupSecs += setupSince(prev, p.start)
		prev = p.end
		wins = append(wins, window{p.relay, float64(p.end-p.start) / 1e9})
	}
	if r := joinWindows(wins); r != nil {
		(&sampling{relay: r}).into(ph)
	}
}

// querier runs querier q's share of the part's queries (every
// len(qConns)-th, at its intended time), one REQ at a time, booking each.
func (e *mixedEnv) querier(user, pctx context.Context, p *mixedPart, q int, mu *sync.Mutex) {
	o, cn := e.o, e.qConns[q]
	eose, eoseInt, firstH := metrics.NewHistogram(), metrics.NewHistogram(), metrics.NewHistogram()
	perSec := metrics.NewSeries(p.start).Times(metrics.TimesEOSE) // eose's values by second, for the live view
	var late int64
	var over []overLimitAnswer
	var fresh *Fresh     // the fresh events of this part, when it publishes
	if p.mixedSpec.pub { // (p.pub is the publishing side's result, set when it ends)
		fresh = e.fresh
	}
	var mine []int // this querier's share: every len(qConns)-th query
	var times []int64
	for k := q; k < len(p.recs); k += len(e.qConns) {
		mine = append(mine, k)
		times = append(times, p.start+p.qOffs[k])
	}
	pace(pctx, len(mine), times, func(j int) bool {
		k, intended := mine[j], times[j]
		if pctx.Err() != nil || cn.Err() != nil {
			return false
		}
		if mono.Now()-intended > int64(time.Millisecond) {
			late++
		}
		r := p.recs[k]
		qctx, cancel := context.WithTimeout(pctx, o.Timeout)
		qr, err := cn.Query(qctx, "m"+strconv.Itoa(q)+"-"+strconv.Itoa(k), []nostr.Filter{r.filter})
		cancel()
		kind := bookQueryEnd(user, p.qled, r, qr, err, o.Timeout)
		a, beyond := overLimitOf(r, fresh, p.mixedSpec.first, p.mixedSpec.first+e.perPart-1)
		r.hold(nil, 0, false)
		if a.over = r.excess.OverLimit; beyond && a.over > 0 {
			over = append(over, a)
		}
		p.qwd.Book(kind)
		if kind == outcome.Accepted {
			eose.Record(r.latency)
			perSec.Latency(qr.End, r.latency)
			eoseInt.Record(qr.End - intended)
			if r.first > 0 {
				firstH.Record(r.first)
			}
		}
		return pctx.Err() == nil && cn.Err() == nil
	})
	mu.Lock()
	defer mu.Unlock()
	p.eose.Merge(eose)
	p.eoseInt.Merge(eoseInt)
	p.first.Merge(firstH)
	p.lateQueries += late
	p.overAnswers = append(p.overAnswers, over...)
}

// bookQueryAnswer books one REQ's end in led and keeps its answer in r for
// verification: EOSE accepted; CLOSED refused (by class); no end timed out
// or connection lost; stopped by the user cancelled, by the phase not run
// (neither is verified).
func bookQueryAnswer(user context.Context, led *outcome.Ledger, r *queryRecord, qr wire.QueryResult, err error, timeout time.Duration) outcome.Kind {
	k := bookQueryEnd(user, led, r, qr, err, timeout)
	r.hold(nil, 0, false)
	return k
}

// skipPart books the work of a part that did not run: cancelled when the
// user stopped the run, not run (phase aborted) when an earlier part
// stopped for lack of progress.
func (e *mixedEnv) skipPart(ctx context.Context, spec mixedSpec, aborted string) *mixedPart {
	p := &mixedPart{mixedSpec: spec}
	book := func(op string, n int) {
		l := outcome.New(op, int64(n))
		if ctx.Err() != nil {
			l.Settle(outcome.Cancelled, "")
		} else {
			l.Settle(outcome.NotRun, outcome.WhyAborted)
		}
		p.skipped = append(p.skipped, l.Result())
	}
	if spec.pub {
		book(results.OpEvent, e.perPart)
	}
	if spec.query {
		book(results.OpQuery, e.nQ)
	}
	return p
}

// mixedAborted is why a part stopped for lack of progress ("" if none did).
func mixedAborted(parts []*mixedPart) string {
	for _, p := range parts {
		if p.pub != nil && p.pub.Aborted != "" {
			return p.name + ": " + p.pub.Aborted
		}
		if p.qwd != nil && p.qwd.Aborted() != "" {
			return p.name + ": " + p.qwd.Aborted()
		}
	}
	return ""
}

// mixedReadBack is the final read of every accepted event, by id.
type mixedReadBack struct {
	acct    results.Account
	ver     *results.Verification
	errs    []string
	replies []verify.Reply // answers that ended with EOSE, verified together
}

// readBackChunk is the most ids asked for in one REQ.
const readBackChunk = 100

// readBack asks the relay, once the publishers have stopped, for every event
// it accepted during the phase, by id, and checks the answers against that
// set: an event accepted but not returned is missing. Skipped (booked
// cancelled or not run) when the run was interrupted or a part stalled.
func (e *mixedEnv) readBack(ctx context.Context, parts []*mixedPart, mp *mixedProgress) mixedReadBack {
	var accepted []*nostr.Event
	for _, p := range parts {
		for _, n := range p.accepted {
			accepted = append(accepted, e.fresh.Events[n])
		}
	}
	chunk := e.readBackIDs()
	nReq := (len(accepted) + chunk - 1) / chunk
	led := outcome.New(results.OpRead, int64(nReq))
	rb := mixedReadBack{ver: &results.Verification{Verified: true}}
	if ctx.Err() != nil || mixedAborted(parts) != "" || nReq == 0 {
		led.SettleFor(ctx, outcome.WhyAborted)
		rb.acct = led.Result()
		return rb
	}
	if o := e.o; o.Parts != nil {
		o.Parts(mixedReadBackPart)
	}
	e.qConns = e.q.refresh(ctx)
	pctx, wd := outcome.NewWatchdog(ctx, 3, "read-back REQs ended without EOSE (timed out or connection lost)")
	defer wd.Stop()
	model, sigs := verify.NewModel(accepted), verify.NewChecker()
	mp.reading(led) // its REQs count in the plan's progress as they end
	for i := 0; i < nReq && pctx.Err() == nil && e.qConns[0].Err() == nil; i++ {
		batch := accepted[i*chunk : min(len(accepted), (i+1)*chunk)]
		e.readBackOne(ctx, pctx, batch, i, led, wd, sigs, &rb)
	}
	// One reading of replaceable events (latest only, or keeps superseded
	// versions) for every answer; no cap is inferred: every id is asked for.
	j := verify.Judge(rb.replies, model, e.o.RelayCap, false)
	for i := range j.Answers {
		verify.Add(rb.ver, &j.Answers[i])
	}
	j.Apply(rb.ver)
	wd.Settle(led, outcome.WhyConnGone)
	rb.acct = led.Result()
	return rb
}

// readBackOne reads one batch of accepted events by id and keeps its answer
// for verification.
func (e *mixedEnv) readBackOne(user, pctx context.Context, batch []*nostr.Event, i int, led *outcome.Ledger, wd *outcome.Watchdog,
	sigs *verify.Checker, rb *mixedReadBack) {
	f := nostr.Filter{IDs: make([]string, len(batch)), Limit: len(batch)}
	known := make(map[string]int, len(batch))
	for j, ev := range batch {
		f.IDs[j] = ev.ID
		known[ev.ID] = j
	}
	raws, ok := readBackIDs(user, pctx, e.qConns[0], "rb-"+strconv.Itoa(i), f, e.o.Timeout, led, wd, &rb.errs)
	if !ok {
		return
	}
	evs, invalid := sigs.Events(raws)
	rb.replies = append(rb.replies, verify.Reply{Filter: &f, Events: evs, Invalid: invalid})
}

// readBackIDs sends one read-back REQ of f (ids of accepted events) on
// conn within timeout, books its outcome, and returns the events' raw JSON
// when it ended with EOSE; an answer that did not end so adds its error to
// errs (each once).
func readBackIDs(user, pctx context.Context, conn *wire.Conn, sub string, f nostr.Filter, timeout time.Duration,
	led *outcome.Ledger, wd *outcome.Watchdog, errs *[]string) ([][]byte, bool) {
	qctx, cancel := context.WithTimeout(pctx, timeout)
	qr, err := conn.Query(qctx, sub, []nostr.Filter{f})
	cancel()
	r := &queryRecord{filter: f}
	k := bookQueryAnswer(user, led, r, qr, err, timeout)
	wd.Book(k)
	if k != outcome.Accepted {
		if r.err != "" {
			*errs = verify.AppendUnique(*errs, "read-back: "+r.err)
		}
		return nil, false
	}
	return r.raws, true
}

// buildMixedPhase assembles the phase: the accounts, the groups of each
// side alone and together, the verification and the ratios.
func buildMixedPhase(ctx context.Context, ph *results.Phase, e *mixedEnv, parts []*mixedPart, rb mixedReadBack) {
	o := e.o
	ph.Params = map[string]any{
		"duration": o.Duration.String(), "publish_rate": o.PublishRate, "query_rate": o.QueryRate,
		"publishers": o.Publishers, "queriers": o.Queriers, "window": o.Window, "size": o.Size,
		"limit": o.Limit, "timeout": o.Timeout.String(),
	}
	ph.Rates = map[string]float64{}
	ph.Aborted = mixedAborted(parts)
	var cpu time.Duration
	var allRecs []*queryRecord
	overlap, overLive := 0, int64(0)
	for i, p := range parts {
		if !p.ran {
			continue
		}
		if i == 2 { // together: events are stored while the REQs run
			for _, r := range p.recs {
				overlap += dropRepeats(r)
			}
		}
		if ph.Start.IsZero() {
			ph.Start = mono.Time(p.start)
		}
		ph.Duration += p.end - p.start
		cpu += p.cpu
		overLive += p.overLive
		allRecs = append(allRecs, p.recs...)
	}
	ph.Accounts = mixedAccounts(parts, rb.acct)
	coalesceUnsent(&ph.Accounts[0], parts, o.PublishRate)
	ph.Counts["read_back_events"] = rb.ver.Returned
	ph.Verification = mixedVerification(allRecs, o.RelayCap, rb)
	ph.Verification.Notes = mixedOverLimitNote(ph.Verification.Notes, ph.Verification.OverLimit, overLive)
	if overlap > 0 {
		ph.Verification.Notes = append(ph.Verification.Notes, fmt.Sprintf("%s events came twice in one answer while publishing ran alongside (a relay whose live feed and stored results overlap for an event stored during the REQ; NIP-01 does not forbid it, clients drop repeats by id): counted once, not failed", numfmt.Group(int64(overlap))))
		ph.Counts["repeated_while_storing"] = int64(overlap)
	}
	mixedGroups(ph, parts)
	reportSets(ctx, ph, e.pub, e.q)
	ph.Errors = verify.AppendUnique(ph.Errors, rb.errs...)
	ph.Resources = &results.Resources{ClientCPUSecs: cpu.Seconds()}
	ph.Notes = append(ph.Notes,
		fmt.Sprintf("three parts of %v each: publish alone (%s events/s over %s), query alone (%s queries/s over %s, one REQ at a time each), then both together", o.Duration, fmtRate(o.PublishRate), numfmt.Count(o.Publishers, "connection"), fmtRate(o.QueryRate), numfmt.Count(o.Queriers, "connection")),
		"open loop: sends and REQs follow a schedule; OK and EOSE latency are timed from the actual send, and each is also kept timed from the intended send time (labelled so), where a stalled client or relay shows up",
		"duration is the sum of the three parts (the final read-back is not timed)",
	)
	if mixedQueried(parts) && slices.ContainsFunc(ph.Groups, func(g results.Group) bool { return g.Counts["late_start"] > 0 }) {
		// the column is shown only when a REQ started late: so is its note
		ph.Notes = append(ph.Notes, "Late start (query groups): REQs sent more than 1 ms after their scheduled time, because each query connection runs one REQ at a time (one still awaiting its EOSE holds the next back) or the client woke late; EOSE latency from the intended send time counts that wait")
	}
	if ctx.Err() != nil {
		ph.Notes = append(ph.Notes, "interrupted: the work not done is cancelled (later parts did not run, nothing was read back)")
	}
}

// mixedQueried says whether a querying part ran (its group has a Late
// start count).
func mixedQueried(parts []*mixedPart) bool {
	return slices.ContainsFunc(parts, func(p *mixedPart) bool { return p.ran && p.qled != nil })
}

// mixedAccounts sums the parts' accounts into one per kind of operation
// (event, query), then the read-back's.
func mixedAccounts(parts []*mixedPart, readBack results.Account) []results.Account {
	var ev, q results.Account
	for _, p := range parts {
		if p.pub != nil {
			addToAccount(&ev, p.pub.Account(results.OpEvent))
		}
		if p.qled != nil {
			a := p.qled.Result()
			addToAccount(&q, &a)
		}
		for i := range p.skipped {
			if p.skipped[i].Op == results.OpEvent {
				addToAccount(&ev, &p.skipped[i])
			} else {
				addToAccount(&q, &p.skipped[i])
			}
		}
	}
	return []results.Account{ev, q, readBack}
}

// dropRepeats removes from r's answer the repeats of an event id it already
// holds, keeping the first copy, and returns how many it removed. Used only
// for answers to REQs sent while events were being published: a relay may
// send an event stored during the REQ both from its live feed and from its
// stored results. Unparseable events are kept (the verifier counts them).
func dropRepeats(r *queryRecord) int {
	if len(r.raws) < 2 {
		return 0
	}
	seen := make(map[string]bool, len(r.raws))
	kept := r.raws[:0:0]
	n := 0
	for _, raw := range r.raws {
		var head struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(raw, &head) == nil && head.ID != "" {
			if seen[head.ID] {
				n++
				continue
			}
			seen[head.ID] = true
		}
		kept = append(kept, raw)
	}
	r.raws = kept
	return n
}

// mixedVerification checks the queries' answers (validity, filter match,
// duplicates) and adds the read-back's (missing and extra too).
func mixedVerification(recs []*queryRecord, relayCap int, rb mixedReadBack) *results.Verification {
	ver := verifyQueries(recs, nil, relayCap).total
	ver.Notes = dropPrefixed(ver.Notes, "nothing was published in this run")
	ver.Notes = append(ver.Notes, "events arrive while the queries run, so their answers are checked for validity, filter match and duplicates only; missing events are checked by reading back every accepted event by id once the publishers stopped")
	verify.Add(ver, rb.ver)
	if rb.acct.Accepted < rb.acct.Requested {
		ver.Notes = append(ver.Notes, fmt.Sprintf("%s of %s read-back REQs did not end with EOSE: the events they asked for were not checked", numfmt.Group(rb.acct.Requested-rb.acct.Accepted), numfmt.Group(rb.acct.Requested)))
	}
	ver.Verified = ver.Checked > 0
	verify.Finish(ver)
	return ver
}

// mixedGroups adds each side's group per part, the headline latencies and
// rates, and the together/alone ratios.
func mixedGroups(ph *results.Phase, parts []*mixedPart) {
	pa, okAlone := mixedPubGroup(ph, parts[0], "alone")
	qa, eoseAlone := mixedQueryGroup(ph, parts[1], "alone")
	pt, okTog := mixedPubGroup(ph, parts[2], "together")
	qt, eoseTog := mixedQueryGroup(ph, parts[2], "together")
	for name, h := range map[string]*metrics.Histogram{"ok": okTog, "eose": eoseTog, "ok_alone": okAlone, "eose_alone": eoseAlone} {
		if h != nil {
			ph.Latency[name] = h.Result()
		}
	}
	ph.Rates["events_per_sec_alone"], ph.Rates["queries_per_sec_alone"] = pa, qa
	ph.Rates[results.RateEvents], ph.Rates[results.RateQueries] = pt, qt
	mixedRatio(ph, "publish_throughput_ratio", pa, pt, "events/s")
	mixedRatio(ph, "query_throughput_ratio", qa, qt, "queries/s")
	for _, hs := range []struct {
		name       string
		alone, tog *metrics.Histogram
	}{{"ok", okAlone, okTog}, {"eose", eoseAlone, eoseTog}} {
		if hs.alone != nil && hs.tog != nil && hs.alone.Count() > 0 && hs.tog.Count() > 0 {
			mixedLatRatio(ph, hs.name+"_p50_ratio", hs.alone.Quantile(50), hs.tog.Quantile(50))
			mixedLatRatio(ph, hs.name+"_p99_ratio", hs.alone.Quantile(99), hs.tog.Quantile(99))
		}
	}
	ph.Notes = pairPartNotes(ph.Notes) // mixednotes.go: a note both publishing parts have, once
}

// pubGroup adds a part's publishing side as a group; it returns its
// accepted rate and OK latency (accepted events only).
func mixedPubGroup(ph *results.Phase, p *mixedPart, suffix string) (float64, *metrics.Histogram) {
	if p.pub == nil {
		return 0, nil
	}
	g := results.Group{Name: "publish/" + suffix, Counts: p.pub.Counts, Rates: p.pub.Rates, Latency: p.pub.Latency}
	addOthers(&g, p)
	ph.Groups = append(ph.Groups, g)
	for k, v := range p.pub.Counts {
		ph.Counts["publish_"+suffix+"_"+k] = v
	}
	for k, v := range p.pub.Refused {
		ph.Refused[k] += v
	}
	ph.Errors = verify.AppendUnique(ph.Errors, p.pub.Errors...)
	for _, n := range p.pub.Notes {
		ph.Notes = append(ph.Notes, "publish/"+suffix+": "+n)
	}
	return p.pub.Rates[results.RateEvents], p.okHist
}

// queryGroup adds a part's querying side as a group, its counts from the
// part's query account; it returns its EOSE rate and latency.
func mixedQueryGroup(ph *results.Phase, p *mixedPart, suffix string) (float64, *metrics.Histogram) {
	if p.qled == nil {
		return 0, nil
	}
	a := p.qled.Result()
	secs := float64(p.end-p.start) / 1e9
	g := results.Group{Name: "query/" + suffix, Rates: map[string]float64{},
		Counts: map[string]int64{"requested": a.Requested, "queries": a.Accepted, "refused": a.Refused, "timed_out": a.TimedOut,
			"failed": a.TimedOut + a.ConnLost + a.Refused, "not_run": a.NotRun, "cancelled": a.Cancelled, "late_start": p.lateQueries},
		Latency: map[string]*results.Histogram{"eose": p.eose.Result(), "eose_from_intended": p.eoseInt.Result()}}
	if p.first.Count() > 0 {
		g.Latency[results.LatencyFirstEvent] = p.first.Result()
	}
	var returned int64
	for _, r := range p.recs {
		returned += int64(len(r.raws))
		if r.err != "" {
			ph.Errors = verify.AppendUnique(ph.Errors, "query: "+r.err)
		}
	}
	g.Counts[results.CountEventsReturned] = returned
	addOthers(&g, p)
	if secs > 0 {
		g.Rates[results.RateQueries] = float64(a.Accepted) / secs
	}
	if a.Accepted > 0 {
		g.Rates["events_per_query"] = float64(returned) / float64(a.Accepted)
	}
	ph.Groups = append(ph.Groups, g)
	ph.Counts["query_"+suffix+"_queries"] = a.Accepted
	ph.Counts["query_"+suffix+"_failed"] = g.Counts[results.CountFailed]
	return g.Rates[results.RateQueries], p.eose
}

func mixedRatio(ph *results.Phase, name string, a, b float64, unit string) {
	if a > 0 && b > 0 {
		ph.Rates[name] = b / a
		ph.Notes = append(ph.Notes, fmt.Sprintf("%s together/alone: %s× (%s %s alone, %s together)", ratioLabel(name), numfmt.Ratio(b/a), fmtNum(a), unit, fmtNum(b)))
	}
}

func mixedLatRatio(ph *results.Phase, name string, a, b int64) {
	if a > 0 && b > 0 {
		ph.Rates[name] = float64(b) / float64(a)
		ph.Notes = append(ph.Notes, fmt.Sprintf("%s together/alone: %s× (%v alone, %v together)", ratioLabel(name), numfmt.Ratio(float64(b)/float64(a)), numfmt.Dur(time.Duration(a)), numfmt.Dur(time.Duration(b))))
	}
}

// mixedPublish publishes fresh events first…first+n-1 open loop at
// o.PublishRate until stopAt and returns the publishing side as a phase,
// its OK latency (accepted events) and the events the relay accepted.
func mixedPublish(ctx context.Context, conns []*wire.Conn, fresh *Fresh, first, n int, o MixedOptions, start, stopAt int64,
	answered func(*atomic.Int64)) (*results.Phase, *metrics.Histogram, []int, []int64) {
	plan := &livePlan{user: ctx, conns: conns, fresh: fresh, window: o.Window, timeout: o.Timeout, stopAt: stopAt, series: metrics.NewSeries(start).Times(metrics.TimesOK), okLatencySeries: true,
		behindWhy: mixedBehindWhy(o.PublishRate)}
	plan.order = make([][]int, len(conns))
	plan.intended = make([][]int64, len(conns))
	times := schedule.ConstantTimes(start, o.PublishRate, n)
	for k := 0; k < n; k++ {
		w := k % len(conns)
		plan.order[w] = append(plan.order[w], first+k)
		plan.intended[w] = append(plan.intended[w], times[k])
	}
	out := newLiveOut(len(fresh.Events))
	answered(&out.done) // the events answered so far, for the progress display
	runLive(ctx, plan, out)
	end := max(out.lastOK.Load(), start+1)
	part := results.NewPhase("", "") // the publishing side of one part, merged into the phase
	ph := &part
	ph.Duration = end - start
	hist := publishSummary(ph, out, n)
	ph.Series = plan.series.Result(end) // per-second OK latency (slowSecondNote)
	ph.Rates = map[string]float64{results.RateEvents: results.PerSecond(ph.Counts[results.CountAccepted], ph.Duration), "intended_per_sec": o.PublishRate}
	var accepted []int
	for k := first; k < first+n; k++ {
		if out.outcomes[k] == Accepted {
			accepted = append(accepted, k)
		}
	}
	return ph, hist, accepted, out.okRecv
}

func dropPrefixed(list []string, prefix string) []string {
	out := list[:0]
	for _, s := range list {
		if !strings.HasPrefix(s, prefix) {
			out = append(out, s)
		}
	}
	return out
}

func fmtNum(v float64) string {
	if v >= 100 {
		return numfmt.Group(int64(math.Round(v)))
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// ratioLabel is a ratio's results key as its note writes it, acronyms as
// such ("ok_p99_ratio" → "OK p99 ratio").
func ratioLabel(key string) string {
	words := strings.Split(key, "_")
	for i, w := range words {
		switch w {
		case "ok", "eose":
			words[i] = strings.ToUpper(w)
		}
	}
	return strings.Join(words, " ")
}

// Check checks the options as the CLI's flags set them (Checked), with the
// fresh events' size and the queries' answers from in's corpus: each
// range, then the costs: two parts' fresh events signed before the clock,
// the queries of three parts and their answers, the connections.
func (o MixedOptions) Check(r *flagcheck.Ranges, in CheckInput) {
	r.Positive("duration", o.Duration)
	r.RateMax("publish-rate", o.PublishRate, false, "duration", o.Duration)
	r.RateMax("query-rate", o.QueryRate, false, "duration", o.Duration)
	r.Min("publishers", o.Publishers, 1)
	r.Min("queriers", o.Queriers, 1)
	r.Min("window", o.Window, 1)
	r.Window("window", o.Window, 1024, 0)
	r.QueryLimit("query-limit", o.Limit)
	r.Positive("timeout", o.Timeout)
	r.ConnPair("publishers", o.Publishers, "queriers", o.Queriers)
	perQuery := flagcheck.RecordBytes + float64(min(o.Limit, in.Events))*flagcheck.StoredEventBytes(in.Size)
	r.Memory("query-limit", o.Limit, 1, perQuery, "query and its answer")
	withDur := func(v float64) string { return fmt.Sprintf("%g (× --duration %v)", v, o.Duration) }
	r.Memory("publish-rate", withDur(o.PublishRate), 2*o.PublishRate*o.Duration.Seconds(), flagcheck.FreshEventBytes(in.Size), "event")
	r.Memory("query-rate", withDur(o.QueryRate), 2*o.QueryRate*o.Duration.Seconds(), perQuery, "query and its answer")
}
