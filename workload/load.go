package workload

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	rtmetrics "runtime/metrics"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/relaybench/relaybench/corpus"
	"github.com/relaybench/relaybench/internal/mono"
	"github.com/relaybench/relaybench/internal/numfmt"
	"github.com/relaybench/relaybench/internal/sysinfo"
	"github.com/relaybench/relaybench/metrics"
	"github.com/relaybench/relaybench/nostr"
	"github.com/relaybench/relaybench/outcome"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/schedule"
	"github.com/relaybench/relaybench/wire"
)

// Load kinds (-load-kind).
const (
	LoadPublish = "publish" // every op publishes a distinct pre-signed event; done at its OK
	LoadQuery   = "query"   // every op runs a REQ drawn from events the relay holds; done at EOSE
	LoadMixed   = "mixed"   // publishes and queries in the ratio PublishParts:QueryParts
)

// LoadOptions configure Load.
type LoadOptions struct {
	Base    `set:"timeout=10s"`
	Name    string           // phase name (default "load")
	Kind    string           // LoadPublish (default), LoadQuery or LoadMixed
	Pattern schedule.Pattern // intended times of the ops
	// Pool is the most operations in flight (-load-pool; default
	// schedule.DefaultPool). An op intended while all are busy waits for a
	// free worker up to MaxLateness, then is dropped and counted.
	Pool int
	// Connections the ops are spread over (default min(Pool, 8)): op
	// workers share them, so several ops are in flight on each.
	Connections int
	MaxLateness time.Duration // -load-max-lateness (default schedule.DefaultMaxLateness)
	Warmup      time.Duration // -load-warmup: counted, left out of latency and lateness
	Drain       time.Duration // how long in-flight ops may finish after the pattern (default 10 s)
	// PublishParts:QueryParts is the mix of LoadMixed (default 4:1).
	PublishParts, QueryParts int
	Size                     int // content bytes of each published event (default 1024)
	MaxEvents                int // refuse a pattern needing more distinct events (0: no cap; they are streamed from disk, see loadEvents)
	Limit                    int // limit of each query filter (default 100)
	// Source holds the events queries are drawn from: events the relay
	// holds (default: the corpus's, which the caller publishes first).
	Source []*nostr.Event
	// Live receives a line per second while the load runs (t, intended/s,
	// sent/s, accepted/s, refused, dropped, in flight, p50, p99); nil: none.
	Live io.Writer
	// Show makes a progress display (label, total): of the operations
	// ended, under the phase's plan, when Live is nil; of a mixed load's
	// read-back. Nil: none (loadprogress.go).
	Show func(label string, total int64) func(done int64)
	// Signed is called once the events are signed, before the clock starts
	// (progress display).
	Signed func(n int, took time.Duration)
	// Segment runs only this execution segment's share: operation k of the
	// pattern (its position) when k mod N = I, at its intended time, with
	// the segment's share of Pool and Connections (zero: everything).
	Segment Segment
}

func (o *LoadOptions) defaults() error {
	var errs []error
	if o.Name == "" {
		o.Name = "load"
	}
	if o.Kind == "" {
		o.Kind = LoadPublish
	}
	switch o.Kind {
	case LoadPublish, LoadQuery, LoadMixed:
	default:
		errs = append(errs, fmt.Errorf("--load-kind: unknown kind %q (want publish, query or mixed)", o.Kind))
	}
	if o.Pattern == nil {
		errs = append(errs, errors.New("load: no pattern"))
	}
	if o.Pool < 0 {
		errs = append(errs, fmt.Errorf("--load-pool: must be positive, got %d", o.Pool))
	}
	if o.Pool == 0 {
		o.Pool = schedule.DefaultPool
	}
	if o.Connections < 0 {
		errs = append(errs, fmt.Errorf("--load-connections: must be positive, got %d", o.Connections))
	}
	if o.Connections == 0 {
		o.Connections = min(o.Pool, 8)
	}
	o.Connections = min(o.Connections, o.Pool)
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	if o.PublishParts < 0 || o.QueryParts < 0 {
		errs = append(errs, fmt.Errorf("--load-mix: parts must be ≥ 0, got %d:%d", o.PublishParts, o.QueryParts))
	}
	if o.PublishParts == 0 && o.QueryParts == 0 {
		o.PublishParts, o.QueryParts = 4, 1
	}
	if o.Size <= 0 {
		o.Size = 1024
	}
	if o.Limit <= 0 {
		o.Limit = 100
	}
	return errors.Join(errs...)
}

// publishes returns how many of n ops publish (op k publishes when
// k mod (P+Q) < P).
func (o *LoadOptions) publishes(n int64) int64 {
	switch o.Kind {
	case LoadPublish:
		return n
	case LoadQuery:
		return 0
	}
	p, q := int64(o.PublishParts), int64(o.QueryParts)
	return n/(p+q)*p + min(n%(p+q), p)
}

// queryOrdinal is how many queries the pattern sends before operation
// seq (a query operation's number among the queries).
func (o *LoadOptions) queryOrdinal(seq int64) int64 { return seq - o.publishes(seq) }

// EventsNeeded is how many distinct events Load signs for o: one per
// publishing op of the pattern.
func (o LoadOptions) EventsNeeded() (int64, error) {
	if err := o.defaults(); err != nil {
		return 0, err
	}
	return o.publishes(schedule.Count(o.Pattern)), nil
}

// loadEvents are the pre-signed events of one load phase, streamed from
// the file they were signed into (corpus.SignStreamed): the client's memory
// does not grow with their number, only the disk (about 1.7 KB per 1 KB
// event, freed when the process exits).
type loadEvents struct {
	c     *corpus.Corpus // nil when none
	slack int64          // ops that may still be reading behind the newest
}

func (le *loadEvents) len() int64 {
	if le.c == nil {
		return 0
	}
	return int64(le.c.Len())
}

func (le *loadEvents) id(k int64) string { return le.c.IDAt(int(k)) }
func (le *loadEvents) size(k int64) int  { return le.c.SizeAt(int(k)) }

// raw is event k's wire JSON; every 1,024 events the pages of those sent
// well before are given back, so resident memory stays flat.
func (le *loadEvents) raw(k int64) []byte {
	if k%1024 == 0 && k > le.slack {
		le.c.ReleaseBefore(int(k - le.slack))
	}
	return le.c.RawAt(int(k))
}

// FreshDiskNeed estimates the bytes n pre-signed load events of size
// content bytes take on disk (their wire JSON, escaped, and the index).
func FreshDiskNeed(n, size int) int64 { return int64(n) * int64(size*6/5+480) }

// signLoadEvents signs n fresh events (never seen by any relay: a run
// nonce is in their tags) with the corpus keys, before any clock starts:
// the same events NewFresh makes (content from o.Seed, kind 1, created_at
// now, corpus author i mod min(50, authors)), written to a file as they are
// signed rather than held.
func signLoadEvents(ctx context.Context, c *corpus.Corpus, n int, o *LoadOptions) (*loadEvents, error) {
	le := &loadEvents{slack: int64(o.Pool) + 1024}
	if n == 0 {
		return le, nil
	}
	if c == nil || len(c.Authors) == 0 {
		return nil, fmt.Errorf("fresh events: the corpus has no keys")
	}
	if need, free := FreshDiskNeed(n, o.Size), corpus.TempFree(); free > 0 && need > free {
		return nil, fmt.Errorf("%d distinct events need about %.1f GB in %s, %.1f GB free (set TMPDIR elsewhere, or lower the rate or duration)",
			n, float64(need)/1e9, os.TempDir(), float64(free)/1e9)
	}
	authors := min(50, len(c.Authors))
	nonce := RunNonce()
	now := time.Now().Unix()
	rng := corpus.NewRand(o.Seed, 0x6c697665) // "live", as NewFresh
	t0 := time.Now()
	f, err := corpus.SignStreamed(ctx, n, func(i int, e *nostr.Event) *corpus.Author {
		e.CreatedAt, e.Kind = now, 1
		e.Tags = []nostr.Tag{{"rb", nonce}}
		e.Content = corpus.Content(rng, o.Size)
		return c.Author(i % authors)
	}, corpus.Options{})
	if err != nil {
		return nil, err
	}
	le.c = f
	if o.Signed != nil {
		o.Signed(n, time.Since(t0))
	}
	return le, nil
}

// Load offers the relay at url open-loop load: one op at every intended time
// of o.Pattern, whatever the relay's replies, from a pool of o.Pool workers
// over o.Connections connections (see schedule.Run). Publish ops send
// distinct events signed before the clock starts (fresh ones, so a relay
// never answers "duplicate:"); query ops run filters built from o.Source
// (or the corpus), prepared before the clock too. Latency is corrected:
// from each op's intended time to its OK or EOSE, with the uncorrected
// (send → reply) and the lateness (intended → send) beside it, accepted ops
// only (refusals apart, as ok_refused).
//
// Every slot of the pattern ends in exactly one outcome, in an account per
// kind of op (results.OpEvent, OpQuery): accepted, refused (by class), timed
// out, connection lost, not run (a slot the client could not start within
// MaxLateness: WhyRelayDrop or WhyClientDrop, by who limited the phase; or
// the phase stopped) or cancelled (Ctrl-C). A relay that answers nothing for a whole Timeout stops
// the phase early (Phase.Aborted). The phase says whether the client or the
// relay limited what was sent.
func Load(ctx context.Context, url string, c *corpus.Corpus, o LoadOptions) (results.Phase, error) {
	if err := o.defaults(); err != nil {
		return results.Phase{}, err
	}
	plan, err := prepareLoad(ctx, c, &o)
	if err != nil {
		return results.Phase{}, err
	}
	dial := o.Dial
	dial.OKTimeout = o.Timeout
	setup := mono.Now()
	conns, err := wire.DialPool(ctx, url, o.Connections, dial)
	if err != nil {
		return results.Phase{}, err
	}
	pool := newConnPool(ctx, url, dial, conns)
	defer pool.close()

	pctx, acct := newLoadAccount(ctx, &o, plan)
	defer acct.wd.Stop()
	ops := newLoadOps(pctx, &o, plan, pool, acct)
	if ops.ver != nil {
		defer ops.ver.close()
	}
	stopExpiring := context.AfterFunc(pctx, ops.expireInFlight)
	defer stopExpiring()
	lp := acct.showProgress(&o, plan)
	res, m, err := ops.measure()
	if err != nil {
		return results.Phase{}, err
	}
	acct.settle()
	var rb *loadReadBack
	if o.Kind == LoadMixed {
		r := ops.readBack(ctx, lp) // not timed: after the phase's clock
		rb = &r
	}
	lp.done()
	ph := buildLoadPhase(ctx, res, &o, plan, ops, m)
	verifyByGroup(&ph, rb, ops.ver) // each group's own; the read-back joins the phase's
	if v := ph.Verification; v != nil && o.Kind == LoadMixed {
		v.Notes = mixedOverLimitNote(v.Notes, v.OverLimit, ops.ver.overLive)
	}
	ph.SetupSecs = setupSince(setup, res.Start)
	return ph, ctx.Err()
}

// loadPlan is what the ops need, all built before the clock starts.
type loadPlan struct {
	total, nPub, nQuery int64
	evs                 *loadEvents
	filters             []nostr.Filter
	source              []*nostr.Event // the events the filters were drawn from (relaybench signed them)
}

func prepareLoad(ctx context.Context, c *corpus.Corpus, o *LoadOptions) (*loadPlan, error) {
	p := &loadPlan{}
	p.total, p.nPub = o.segmentPlan(schedule.Count(o.Pattern))
	p.nQuery = p.total - p.nPub
	if o.MaxEvents > 0 && p.nPub > int64(o.MaxEvents) {
		return nil, fmt.Errorf("--load-max-events: %s needs %d distinct events, above the cap of %d (events are never reused: relays would answer duplicate:); raise --load-max-events or lower the rate or duration",
			o.Pattern, p.nPub, o.MaxEvents)
	}
	if p.total == 0 {
		return nil, fmt.Errorf("--load-base: %s intends no operation", o.Pattern)
	}
	if p.nPub > 0 {
		var err error
		if p.evs, err = signLoadEvents(ctx, c, int(p.nPub), o); err != nil {
			return nil, fmt.Errorf("signing load events: %w", err)
		}
	}
	if p.nQuery > 0 {
		var err error
		if p.filters, p.source, err = loadFilters(c, o, p.nQuery); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// loadFilters builds up to 4,096 distinct query filters from o.Source (or
// the corpus), cycling through the shapes; it returns the events it drew
// them from too.
func loadFilters(c *corpus.Corpus, o *LoadOptions, nQuery int64) ([]nostr.Filter, []*nostr.Event, error) {
	source := o.Source
	if len(source) == 0 && c != nil {
		source = c.Events
	}
	b, err := newShapeBuilder(source, o.Limit, o.Seed)
	if err != nil {
		return nil, nil, err
	}
	want := int(min(nQuery, 4096))
	var filters []nostr.Filter
	for i := 0; len(filters) < want && i < want*4; i++ {
		if f, ok := b.build(Shapes[i%len(Shapes)]); ok {
			filters = append(filters, f)
		}
	}
	if len(filters) == 0 {
		return nil, nil, errors.New("load: no query filter can be built from the source events")
	}
	return filters, source, nil
}

// Whys of a load slot not started within MaxLateness of its intended time
// (every slot of the pool busy, or the dispatcher late), booked once the
// phase is over by who limited it (judgeLoad):
//
//   - WhyRelayDrop: every in-flight slot was waiting on the relay's replies
//     while the client had CPU to spare: work the relay prevented
//     (incomplete, exit 4).
//   - WhyMachineDrop: the same, but other processes competed for the
//     machine's cores (sysinfo.OthersBusy): the relay's replies may have
//     been slow because it waited for a CPU, which cannot be told apart
//     from a slow relay; both are said (work not run: incomplete, exit 4,
//     never "relay-limited" alone). It begins the why, machineDropWhy
//     ends it with the machine's load average, as the note quotes it.
//   - WhyClientDrop: the client's CPU or scheduling was the limit: requested
//     work relaybench could not run, not blamed on the relay (its
//     "client-limited:" prefix tells readers and the judge: error, exit 1).
//
// While the phase runs such a slot is booked whyLateDrop.
const (
	WhyRelayDrop   = "relay-limited: pool full: every in-flight slot waited on the relay, not started within --load-max-lateness"
	WhyMachineDrop = RelayOrMachine + " pool full: every in-flight slot waited on the relay's replies while other processes competed for the machine's cores"
	WhyClientDrop  = outcome.WhyClientLimited + " not started within --load-max-lateness: the client's CPU or scheduling, not the relay, kept it from starting in time"
	whyLateDrop    = "not started within --load-max-lateness"
)

// machineDropWhy is the why of the drops of a load whose pool the relay's
// replies kept full on a busy machine: WhyMachineDrop, with the machine's
// load average busy (sysinfo.OthersBusy's clause) quotes ("… competed for
// the machine's cores (the machine's 1-minute load average was 3.0 on 2
// cores; the relay may have waited for a CPU, not been slow), not started
// within --load-max-lateness"): the verdict's not-run reason says the
// figure the note does.
func machineDropWhy(busy string) string {
	load, _, _ := strings.Cut(busy, ": ")
	return WhyMachineDrop + " (" + load + "; the relay may have waited for a CPU, not been slow), not started within --load-max-lateness"
}

// IsDrop says whether why is that of a load slot not started within
// --load-max-lateness (WhyRelayDrop, machineDropWhy's, WhyClientDrop, as
// booked while the phase runs).
func IsDrop(why string) bool {
	return why == WhyRelayDrop || strings.HasPrefix(why, WhyMachineDrop) || why == WhyClientDrop || why == whyLateDrop
}

// Drops counts a's slots not started within --load-max-lateness.
func Drops(a results.Account) int64 {
	var n int64
	for why, c := range a.NotRunBy {
		if IsDrop(why) {
			n += c
		}
	}
	return n
}

// bookDrops books ph's drops (whyLateDrop) as why, judgeLoad's judgement
// of who limited the phase (WhyRelayDrop, machineDropWhy, WhyClientDrop),
// and makes the schedule's drop note tell the same story: a pool that was
// full while the client was judged the limit did not keep the drops from
// starting by itself.
func bookDrops(ph *results.Phase, why string) {
	for i := range ph.Accounts {
		a := &ph.Accounts[i]
		if n := a.NotRunBy[whyLateDrop]; n > 0 {
			delete(a.NotRunBy, whyLateDrop)
			a.NotRunBy[why] += n
		}
	}
	if why != WhyClientDrop {
		return
	}
	for i, n := range ph.Notes {
		if strings.Contains(n, " dropped (not started within ") && strings.HasSuffix(n, " was full") {
			ph.Notes[i] = n + ", but the client, not the relay's replies, kept them from starting in time (the client-limited note says why)"
		}
	}
}

// errStopped replaces the error of an op ended because the phase stopped
// (the user interrupted, or the relay made no progress).
var errStopped = errors.New("stopped before its reply (interrupted or no progress)")

// loadAccount books every slot of a load: one ledger per kind of op, and a
// watch that stops the phase when the relay answers nothing for a Timeout.
type loadAccount struct {
	user       context.Context
	wd         *outcome.Watchdog
	pub, query *outcome.Ledger
	kind       string
	cycle, p   int64
	timeout    int64
	fails      atomic.Int64
	lastAnswer atomic.Int64 // mono time of the last reply (accepted or refused)
}

func newLoadAccount(ctx context.Context, o *LoadOptions, plan *loadPlan) (context.Context, *loadAccount) {
	a := &loadAccount{user: ctx, kind: o.Kind, cycle: int64(o.PublishParts + o.QueryParts), p: int64(o.PublishParts), timeout: int64(o.Timeout)}
	if plan.nPub > 0 {
		a.pub = outcome.New(results.OpEvent, plan.nPub)
	}
	if plan.nQuery > 0 {
		a.query = outcome.New(results.OpQuery, plan.nQuery)
	}
	pctx, wd := outcome.NewWatchdog(ctx, 1, "")
	a.wd = wd
	a.lastAnswer.Store(mono.Now())
	return pctx, a
}

// publishes says whether slot seq publishes (the mix applies to the
// pattern's slots in order, so each kind's count is known beforehand).
func (a *loadAccount) publishes(seq int64) bool {
	switch a.kind {
	case LoadPublish:
		return true
	case LoadQuery:
		return false
	}
	return seq%a.cycle < a.p
}

func (a *loadAccount) ledger(seq int64) *outcome.Ledger {
	if a.publishes(seq) {
		return a.pub
	}
	return a.query
}

// recorded books a finished op (schedule.Config.Recorded).
func (a *loadAccount) recorded(s schedule.Slot, out schedule.Outcome) {
	k, detail := a.classify(out)
	a.ledger(s.Seq).Add(k, detail)
	a.watch(k)
}

// dropped books a slot not started in time (schedule.Config.Dropped): who
// limited it is known once the phase is over (bookDrops).
func (a *loadAccount) dropped(s schedule.Slot) { a.ledger(s.Seq).Add(outcome.NotRun, whyLateDrop) }

func (a *loadAccount) classify(out schedule.Outcome) (outcome.Kind, string) {
	switch {
	case out.Err == nil && out.Accepted:
		return outcome.Accepted, ""
	case out.Err == nil:
		return outcome.Refused, outcome.RefusalClass(wire.Class(out.Refused))
	case a.user.Err() != nil:
		return outcome.Cancelled, ""
	case a.wd.Aborted() != "":
		return outcome.NotRun, outcome.WhyAborted
	case errors.Is(out.Err, errStopped), errors.Is(out.Err, context.Canceled):
		return outcome.TimedOut, "" // the drain ended before the reply
	}
	return outcome.OfErrDetail(a.user, out.Err)
}

// watch stops the phase when 3 ops in a row got no reply and the relay
// answered nothing for a whole Timeout: waiting out the pattern would only
// book more of the same.
func (a *loadAccount) watch(k outcome.Kind) {
	switch k {
	case outcome.Accepted, outcome.Refused:
		a.fails.Store(0)
		a.lastAnswer.Store(mono.Now())
	case outcome.TimedOut, outcome.ConnLost:
		n := a.fails.Add(1)
		if quiet := mono.Now() - a.lastAnswer.Load(); n >= 3 && quiet >= a.timeout {
			a.wd.Abort(fmt.Sprintf("%d operations in a row got no reply (timed out or connection lost) and the relay answered nothing for %v",
				n, roundLat(time.Duration(quiet))))
		}
	}
}

// settle gives every slot without an outcome its end: cancelled (Ctrl-C),
// not run (the phase stopped early), or timed out (still unanswered when the
// drain ended).
func (a *loadAccount) settle() {
	for _, l := range a.ledgers() {
		switch {
		case a.user.Err() != nil:
			l.Settle(outcome.Cancelled, "")
		case a.wd.Aborted() != "":
			l.Settle(outcome.NotRun, outcome.WhyAborted)
		default:
			l.Settle(outcome.TimedOut, "")
		}
	}
}

func (a *loadAccount) ledgers() []*outcome.Ledger {
	var ls []*outcome.Ledger
	for _, l := range []*outcome.Ledger{a.pub, a.query} {
		if l != nil {
			ls = append(ls, l)
		}
	}
	return ls
}

// loadOps runs the ops of one load phase.
type loadOps struct {
	pctx  context.Context // the phase: ends on Ctrl-C or when the relay makes no progress
	o     *LoadOptions
	plan  *loadPlan
	pool  *connPool
	acct  *loadAccount
	live  *liveStats
	kinds map[string]*kindStats // mixed load: per kind
	ver   *loadVerifier         // checks the queries' answers (nil: no query)
	// accepted marks the events the relay accepted (mixed load: read back
	// once the phase is over).
	accepted loadAccepted
	// oks tells a mixed load's events still being published when a REQ
	// was sent from stored ones (nil: not a mixed load).
	oks *okTimes

	nextEv, subSeq, returned, bytesSent, nextConn atomic.Int64
}

func newLoadOps(pctx context.Context, o *LoadOptions, plan *loadPlan, pool *connPool, acct *loadAccount) *loadOps {
	l := &loadOps{pctx: pctx, o: o, plan: plan, pool: pool, acct: acct, live: newLiveStats(o.Pattern, o.MaxLateness), kinds: map[string]*kindStats{}}
	if o.Kind == LoadMixed {
		l.kinds[LoadPublish] = newKindStats()
		l.kinds[LoadQuery] = newKindStats()
	}
	if plan.nQuery > 0 {
		l.ver = newLoadVerifier(o.Kind == LoadMixed, plan.source)
	}
	if o.Kind == LoadMixed {
		l.accepted = newLoadAccepted(plan.nPub)
		l.oks = newOKTimes(int64(o.Timeout))
	}
	return l
}

var errNoEvent = errors.New("no pre-signed event left (bug)")

// expireInFlight ends every EVENT awaiting its OK at once (the phase
// stopped): they are booked cancelled or not run, never waited for.
func (l *loadOps) expireInFlight() {
	all, _, _ := l.pool.stats()
	for _, cn := range all {
		cn.ExpireBefore(mono.Now() + 1)
	}
}

// stopped marks the error of an op the phase's end cut short.
func (l *loadOps) stopped(out schedule.Outcome) schedule.Outcome {
	if out.Err != nil && l.pctx.Err() != nil {
		out.Err = errStopped
	}
	return out
}

// opCtx is ctx (the scheduler's: ends at the drain deadline) also ended by
// the phase's end.
func (l *loadOps) opCtx(ctx context.Context) (context.Context, func()) {
	ctx, cancel := context.WithTimeout(ctx, l.o.Timeout)
	stop := context.AfterFunc(l.pctx, cancel)
	return ctx, func() { stop(); cancel() }
}

func okOutcome(ok wire.OK, err error) schedule.Outcome {
	out := schedule.Outcome{Sent: ok.Sent, Done: ok.Recv}
	if err == nil {
		err = ok.Err
	}
	switch {
	case err != nil:
		out.Err = err
	case ok.Accepted:
		out.Accepted = true
	default:
		out.Refused = outcome.RefusalClass(ok.Class)
	}
	return out
}

func (l *loadOps) publish(ctx context.Context, cn *wire.Conn) schedule.Outcome {
	k := l.nextEv.Add(1) - 1
	evs := l.plan.evs
	if evs == nil || k >= evs.len() {
		return schedule.Outcome{Err: errNoEvent}
	}
	ctx, done := l.opCtx(ctx)
	defer done()
	id := evs.id(k)
	if l.oks != nil {
		l.oks.sending(id)
	}
	ok, err := cn.Publish(ctx, id, evs.raw(k))
	if l.oks != nil {
		l.oks.ended(id, ok.Recv)
	}
	l.bytesSent.Add(int64(evs.size(k)))
	out := okOutcome(ok, err)
	if out.Accepted {
		l.accepted.set(k)
	}
	return l.stopped(out)
}

// query sends the query of operation seq of the pattern: its filter is
// chosen by how many queries the pattern has before it, so that a segment
// (--segment) sends the very queries a single instance would.
func (l *loadOps) query(ctx context.Context, cn *wire.Conn, seq int64) schedule.Outcome {
	n := l.subSeq.Add(1) // this instance's: subscription ids stay unique
	qn := l.o.queryOrdinal(seq)
	f := &l.plan.filters[int(qn%int64(len(l.plan.filters)))]
	ctx, done := l.opCtx(ctx)
	res, err := cn.Query(ctx, "lq"+strconv.FormatInt(n, 36), []nostr.Filter{*f})
	done()
	l.returned.Add(int64(len(res.Events)))
	if err == nil && res.Ended == wire.EndEOSE {
		var live int64 // beyond the limit: events still being published when the REQ was sent
		if l.oks != nil && f.Limit > 0 && len(res.Events) > f.Limit {
			live = l.oks.liveIn(res.Events, res.Sent)
		}
		l.ver.add(f, res.Events, live) // every complete answer goes through the verifier
	}
	out := schedule.Outcome{Sent: res.Sent, Done: res.End}
	switch {
	case err != nil:
		out.Err = err
	case res.Ended == wire.EndEOSE:
		out.Accepted = true
	case res.Ended == wire.EndClosed:
		out.Refused = outcome.RefusalClass(res.Class)
	default:
		out.Err = res.Err
		if out.Err == nil {
			out.Err = wire.ErrClosed
		}
	}
	return l.stopped(out)
}

// op runs one slot of a query or mixed load (schedule.SlotOp).
func (l *loadOps) op(ctx context.Context, s schedule.Slot, w int) schedule.Outcome {
	l.live.start(s.Intended)
	cn := l.pool.get(w)
	kind := LoadQuery
	if l.acct.publishes(s.Seq) {
		kind = LoadPublish
	}
	var out schedule.Outcome
	switch {
	case l.pctx.Err() != nil:
		out = schedule.Outcome{Err: errStopped}
	case kind == LoadPublish:
		out = l.publish(ctx, cn)
	default:
		out = l.query(ctx, cn, s.Seq)
	}
	now := mono.Now()
	if out.Sent == 0 {
		out.Sent = now
	}
	if out.Done == 0 {
		out.Done = now
	}
	l.live.finish(s.Intended, out)
	if ks := l.kinds[kind]; ks != nil {
		ks.record(w, s.Intended, l.live.warmEnd(l.o.Warmup), out)
	}
	return out
}

// startPublish starts one publish op (schedule.StartOp). Publishing is
// pipelined: an op writes its EVENT and returns; the OK, matched by id on
// the connection's reader, completes it. No goroutine waits per event, so
// the client's CPU goes to sending.
func (l *loadOps) startPublish(_ context.Context, intended int64, _ int, done func(schedule.Outcome)) {
	l.live.start(intended)
	finish := func(out schedule.Outcome) {
		now := mono.Now()
		if out.Sent == 0 {
			out.Sent = now
		}
		if out.Done == 0 {
			out.Done = now
		}
		out = l.stopped(out)
		l.live.finish(intended, out)
		done(out)
	}
	k := l.nextEv.Add(1) - 1
	evs := l.plan.evs
	switch {
	case evs == nil || k >= evs.len():
		finish(schedule.Outcome{Err: errNoEvent})
		return
	case l.pctx.Err() != nil:
		finish(schedule.Outcome{Err: errStopped})
		return
	}
	cn := l.pool.get(int(l.nextConn.Add(1) - 1))
	l.bytesSent.Add(int64(evs.size(k)))
	if err := cn.SendEvent(evs.id(k), evs.raw(k), func(ok wire.OK) { finish(okOutcome(ok, nil)) }); err != nil {
		finish(schedule.Outcome{Err: err})
	}
}

// loadMeasure is what was measured around the schedule.
type loadMeasure struct {
	cpu, schedP99 time.Duration
	relay         *results.Resources
}

// measure runs the schedule, with the client's CPU, its scheduling delays,
// the live lines and the relay's resources around it.
func (l *loadOps) measure() (*schedule.Result, loadMeasure, error) {
	o := l.o
	var m loadMeasure
	w := o.open(0) // the schedule's Start and End are the phase's clock
	sched0 := schedLatencies()
	l.live.t0.Store(mono.Now() + 1<<62) // set by the first op: see liveStats.start
	stopLive := l.live.print(o.Live, o.Name)
	cfg := schedule.Config{Pattern: o.Pattern, Pool: o.Pool, MaxLateness: o.MaxLateness, Warmup: o.Warmup, Drain: o.Drain,
		Recorded: l.acct.recorded, Dropped: l.acct.dropped, Owns: o.segmentOwns(), Times: loadTimes(o.Kind)}
	var res *schedule.Result
	var err error
	if o.Kind == LoadPublish {
		res, err = schedule.RunAsync(l.pctx, cfg, l.startPublish)
	} else {
		res, err = schedule.RunSlots(l.pctx, cfg, l.op)
	}
	l.live.end.Store(mono.Now())
	w.Close(0)
	m.cpu = w.CPU()
	m.schedP99 = schedLatencyP99(sched0, schedLatencies())
	stopLive()
	m.relay = w.smp.relay
	return res, m, err
}

// buildLoadPhase assembles the phase: the scheduler's measurement, the
// accounts (which set the outcome counts), the connections, the groups of a
// mixed load and what limited it.
func buildLoadPhase(user context.Context, res *schedule.Result, o *LoadOptions, plan *loadPlan, l *loadOps, m loadMeasure) results.Phase {
	ph := res.Phase(o.Name)
	// Ops ended because the phase stopped are in the account (cancelled or
	// not run): they are no relay error.
	kept := ph.Errors[:0]
	for _, e := range ph.Errors {
		if !strings.HasSuffix(e, errStopped.Error()) && !strings.HasSuffix(e, context.Canceled.Error()) {
			kept = append(kept, e)
		}
	}
	ph.Errors = kept
	ph.Params["kind"] = o.Kind
	ph.Params["connections"] = o.Connections
	ph.Params["timeout"] = o.Timeout.String()
	ph.Params["ops_planned"] = plan.total
	if plan.nPub > 0 {
		ph.Params["events_signed"] = plan.nPub
		ph.Params["size"] = o.Size
		ph.Counts[results.CountBytesSent] = l.bytesSent.Load()
	}
	if o.Kind == LoadMixed {
		ph.Params["mix"] = fmt.Sprintf("%d:%d", o.PublishParts, o.QueryParts)
	}
	if plan.nQuery > 0 {
		ph.Params["query_limit"] = o.Limit
		ph.Params["distinct_filters"] = len(plan.filters)
		ph.Counts[results.CountEventsReturned] = l.returned.Load()
		ph.Verification = l.ver.result(o.Kind)
	}
	for _, led := range l.acct.ledgers() {
		ph.Accounts = append(ph.Accounts, led.Result())
	}
	loadCounts(&ph)
	loadStopNotes(&ph, l.acct, res)
	all, redials, redialErrs := l.pool.stats()
	addConnStats(user, &ph, all)
	if redials > 0 || redialErrs > 0 {
		ph.Counts["reconnects"] = redials
		ph.Counts["reconnect_failures"] = redialErrs
		ph.Notes = append(ph.Notes, fmt.Sprintf("connections were lost during the load: %s redialed, %s failed; ops on a lost connection got no reply until it was back (connection lost in the outcomes)", numfmt.Group(int64(redials)), numfmt.Count(redialErrs, "redial")))
	}
	for name, op := range map[string]string{LoadPublish: results.OpEvent, LoadQuery: results.OpQuery} {
		if ks, a := l.kinds[name], ph.Account(op); ks != nil && a != nil {
			ph.Groups = append(ph.Groups, ks.group(name, ph.Duration, *a))
		}
	}
	sort.Slice(ph.Groups, func(i, j int) bool { return ph.Groups[i].Name < ph.Groups[j].Name }) // publish, query
	ph.Resources = &results.Resources{ClientCPUSecs: m.cpu.Seconds()}
	(&sampling{relay: m.relay}).into(&ph)
	if m.schedP99 > 0 {
		ph.Counts["client_sched_p99_ns"] = int64(m.schedP99)
	}
	ph.Rates["intended_per_sec"] = intendedRate(res, o.Pattern)
	bookDrops(&ph, judgeLoad(&ph, res, m.schedP99, machineBusy(ph)))
	switch o.Kind {
	case LoadQuery:
		renameFigures(&ph.Counts, &ph.Rates, &ph.Latency, queryNames)
	case LoadMixed:
		splitMixedLoad(&ph, l.kinds)
	}
	return ph
}

// The schedule names a load's figures as a publish load's (an op is an
// EVENT, done at its OK). A query load's ops are REQs: its figures take
// the names of queries (results/names.go); a mixed load keeps the ops'
// totals under ops_ names and gives each side its own.
var (
	queryNames = map[string]string{
		results.CountAccepted: results.CountQueries, results.CountSent: "reqs_sent",
		"accepted_per_sec": results.RateQueries, "sent_per_sec": "reqs_sent_per_sec",
		results.LatencyOK: results.LatencyEOSE, "ok_uncorrected": "eose_uncorrected", "ok_refused": "closed",
	}
	opNames = map[string]string{
		results.CountAccepted: "ops_accepted", results.CountSent: "ops_sent", results.CountRefused: "ops_refused",
		results.CountTimedOut: "ops_timed_out", "conn_lost": "ops_conn_lost", results.CountFailed: "ops_failed",
		"canceled": "ops_canceled", "not_run": "ops_not_run",
		"accepted_per_sec": "ops_accepted_per_sec", "sent_per_sec": "ops_sent_per_sec",
		results.LatencyOK: "op", "ok_uncorrected": "op_uncorrected", "ok_refused": "op_refused",
	}
)

// renameFigures renames the keys of counts, rates and latencies by names.
func renameFigures(counts *map[string]int64, rates *map[string]float64, lat *map[string]*results.Histogram, names map[string]string) {
	*counts, *rates, *lat = renamed(*counts, names), renamed(*rates, names), renamed(*lat, names)
}

func renamed[V any](m map[string]V, names map[string]string) map[string]V {
	if m == nil {
		return nil
	}
	out := make(map[string]V, len(m))
	for k, v := range m {
		if n, ok := names[k]; ok {
			k = n
		}
		out[k] = v
	}
	return out
}

// splitMixedLoad gives a mixed load's phase the figures of each side under
// their own names: the events' counters and ok latency from the event
// account and the publish group, the queries' from the query account and
// group (whose figures take the query names too); the ops' totals keep
// ops_ names.
func splitMixedLoad(ph *results.Phase, kinds map[string]*kindStats) {
	renameFigures(&ph.Counts, &ph.Rates, &ph.Latency, opNames)
	secs := float64(ph.Duration) / 1e9
	c := ph.Counts
	if a := ph.Account(results.OpEvent); a != nil {
		c[results.CountAccepted], c[results.CountRefused] = a.Accepted, a.Refused
		c[results.CountTimedOut], c["conn_lost"], c[results.CountFailed] = a.TimedOut, a.ConnLost, a.TimedOut+a.ConnLost
		c["canceled"] = a.Cancelled
	}
	if ks := kinds[LoadPublish]; ks != nil {
		c[results.CountSent] = ks.sent.Load()
	}
	if a := ph.Account(results.OpQuery); a != nil {
		c[results.CountQueries] = a.Accepted
	}
	for i := range ph.Groups {
		g := &ph.Groups[i]
		if g.Name == LoadQuery {
			renameFigures(&g.Counts, &g.Rates, &g.Latency, queryNames)
		}
		for k, h := range g.Latency {
			ph.Latency[k] = h
		}
	}
	if secs > 0 {
		ph.Rates["accepted_per_sec"] = float64(c[results.CountAccepted]) / secs
		ph.Rates[results.RateQueries] = float64(c[results.CountQueries]) / secs
	}
}

// loadCounts sets the outcome counters from the accounts: accepted,
// refused (and Refused by class), timed_out, conn_lost, failed (timed out +
// connection lost), dropped (not started within --load-max-lateness: Drops),
// not_run (other), canceled;
// planned is every slot of the pattern, intended those reached.
func loadCounts(ph *results.Phase) {
	var t results.Account
	for _, a := range ph.Accounts {
		t.Add(a)
	}
	c := ph.Counts
	c["planned"] = t.Requested
	c[results.CountAccepted], c[results.CountRefused] = t.Accepted, t.Refused
	c[results.CountTimedOut], c["conn_lost"], c[results.CountFailed] = t.TimedOut, t.ConnLost, t.TimedOut+t.ConnLost
	c["dropped"] = Drops(t)
	c["not_run"] = t.NotRun - c["dropped"]
	c["canceled"] = t.Cancelled
	delete(c, "unfinished") // settled: timed out (no reply by the drain's end), cancelled or not run
	ph.Refused = nil
	if len(t.RefusedBy) > 0 {
		ph.Refused = t.RefusedBy
	}
}

// loadStopNotes says why a phase stopped early, and replaces the
// scheduler's "interrupted" note when it was the relay's doing.
func loadStopNotes(ph *results.Phase, a *loadAccount, res *schedule.Result) {
	ph.Aborted = a.wd.Aborted()
	if ph.Aborted == "" {
		return
	}
	ph.Notes = dropPrefixed(ph.Notes, "interrupted after")
	ph.Notes = append([]string{fmt.Sprintf("stopped early after %v: %s; the %d slots not started are not run (phase aborted)",
		roundLat(time.Duration(res.End-res.Start)), ph.Aborted, ph.Counts["planned"]-res.Intended+res.Canceled)}, ph.Notes...)
}

// connPool holds the load's connections. A connection the relay closed is
// redialed in the background (at most once a second per slot) while ops
// routed to it fail with its error: a relay that drops connections under
// load shows as failures and reconnects, not as a silent stop.
type connPool struct {
	ctx     context.Context // cancelled by close: ends redials under way
	cancel  context.CancelFunc
	url     string
	dial    wire.Options
	slots   []atomic.Pointer[wire.Conn]
	busy    []atomic.Bool
	mu      sync.Mutex
	all     []*wire.Conn // every connection ever dialed, for the stats
	redials int64
	failed  int64
	wg      sync.WaitGroup
	closed  bool
}

func newConnPool(ctx context.Context, url string, dial wire.Options, conns []*wire.Conn) *connPool {
	ctx, cancel := context.WithCancel(ctx)
	p := &connPool{ctx: ctx, cancel: cancel, url: url, dial: dial, slots: make([]atomic.Pointer[wire.Conn], len(conns)),
		busy: make([]atomic.Bool, len(conns)), all: append([]*wire.Conn(nil), conns...)}
	for i, c := range conns {
		p.slots[i].Store(c)
	}
	return p
}

// get returns worker w's connection, starting a redial when it is dead.
func (p *connPool) get(w int) *wire.Conn {
	i := w % len(p.slots)
	cn := p.slots[i].Load()
	if cn.Err() != nil && p.busy[i].CompareAndSwap(false, true) {
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return cn
		}
		p.wg.Add(1)
		p.mu.Unlock()
		go p.redial(i)
	}
	return cn
}

func (p *connPool) redial(i int) {
	defer p.wg.Done()
	defer p.busy[i].Store(false)
	start := time.Now()
	ctx, cancel := context.WithTimeout(p.ctx, 5*time.Second)
	cn, err := wire.Dial(ctx, p.url, p.dial)
	cancel()
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil || p.closed {
		if err == nil {
			cn.Close()
		} else {
			p.failed++
		}
		// Wait out the rest of a second before the next attempt (ops keep
		// failing meanwhile), unless the load is over.
		if wait := time.Second - time.Since(start); wait > 0 && !p.closed {
			p.mu.Unlock()
			select {
			case <-time.After(wait):
			case <-p.ctx.Done():
			}
			p.mu.Lock()
		}
		return
	}
	p.redials++
	p.all = append(p.all, cn)
	p.slots[i].Store(cn)
}

func (p *connPool) stats() (all []*wire.Conn, redials, failed int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]*wire.Conn(nil), p.all...), p.redials, p.failed
}

// close stops redialing, waits for redials under way and closes every
// connection.
func (p *connPool) close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.cancel()
	p.wg.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	closeAll(p.all)
}

// judgeLoad says what limited a load phase. The scheduler marks a phase
// client-limited whenever ops were late or dropped; that is the client's
// doing when its dispatcher woke late or its CPU was saturated, but the
// relay's when every worker was busy waiting for replies (the pool was full
// because the relay answered slowly) while the client had CPU to spare.
//
// schedP99 is the p99 of how long the client's runnable goroutines waited
// for a CPU during the run (Go's /sched/latencies:seconds): reply times
// include it (the reader goroutine reading an OK late), so a full pool is
// blamed on the relay only when replies were slow beyond it.
//
// busy is sysinfo.OthersBusy's clause when other processes competed for the
// machine's cores ("" when not): a pool the relay's replies kept full is
// then the relay's or the machine's (relayOrMachineNote), and every other
// judgement's note ends with the clause. dropWhy is how the phase's drops
// are booked: WhyRelayDrop when the relay was the limit (the note starts
// "relay-limited:"), machineDropWhy when it or the machine was,
// WhyClientDrop otherwise.
func judgeLoad(ph *results.Phase, res *schedule.Result, schedP99 time.Duration, busy string) (dropWhy string) {
	secs := float64(ph.Duration) / 1e9
	cores := float64(runtime.GOMAXPROCS(0))
	client := 0.0
	if secs > 0 {
		client = ph.Resources.ClientCPUSecs / secs
		ph.Resources.ClientCPUUtil = client / cores
	}
	cpuSaturated := client >= 0.9*cores
	dispatchLate := res.DispatchLateness != nil && res.DispatchLateness.Count() > 0 &&
		res.DispatchLateness.Quantile(99) > int64(schedule.OnTime)
	poolFull, clientSlow := poolFilledBy(res, secs, schedP99)
	cpuNote := loadCPUNote(ph, secs, client, cores, schedP99)
	clientBusy := clientWasBusy(res, client, cores, schedP99) // evidence of a late start (clientLateToStart)
	lateToStart := clientLateToStart(res, clientBusy)
	switch {
	case cpuSaturated:
		ph.ClientLimited = true
		ph.Notes = append(ph.Notes, clientCPUSaturated+" ("+cpuNote+"): what was sent and the latencies are the client's limit, not the relay's")
	case (res.ClientLimited || dispatchLate) && poolFull && clientSlow:
		ph.ClientLimited = true
		ph.Notes = append(ph.Notes, fmt.Sprintf("client-limited: %s filled, but the client's own goroutines waited p99 %v to run, a large part of the reply time p99 %v: "+clientSlowToRead+", so the relay cannot be blamed (%s)",
			numfmt.AllOf(res.Pool, "in-flight slot"), roundLat(schedP99), roundLat(time.Duration(res.Uncorrected.Quantile(99))), cpuNote))
	case (res.ClientLimited || dispatchLate) && poolFull && res.Dropped > 0 && !lateToStart:
		// Dropped because every worker waited on the relay (the
		// dispatcher then waits for room in the queue in front of the pool).
		ph.ClientLimited, dropWhy = false, WhyRelayDrop
		if busy != "" {
			dropWhy = machineDropWhy(busy)
			ph.Notes = append(ph.Notes, relayOrMachineNote(res.Pool, cpuNote, busy))
			return dropWhy
		}
		ph.Notes = append(ph.Notes, fmt.Sprintf("relay-limited: ops were late or dropped because %s (--load-pool) %s waiting for the relay's replies while the client had CPU to spare (%s); the relay did not keep up with the offered rate at this concurrency",
			numfmt.AllOf(res.Pool, "in-flight slot"), numfmt.Were(res.Pool), cpuNote))
	case (res.ClientLimited || dispatchLate) && poolFull && res.Dropped == 0 && lateToStart:
		// Late, none dropped, every slot busy at times, but the dispatcher
		// handing ops out late was most of the lateness: the client's.
		ph.ClientLimited = true
		ph.Notes = append(ph.Notes, dispatcherLateNote(res, cpuNote))
	case (res.ClientLimited || dispatchLate) && poolFull && !lateToStart:
		// Late, none dropped: the relay kept up, a burst of slow replies
		// held every slot for a while.
		ph.ClientLimited = false
		ph.Notes = append(ph.Notes, slotWaitNote(res, cpuNote, clientBusy))
	case (dispatchLate || res.ClientLimited && res.MaxInFlight < int64(res.Pool)) && client < cores/2 && schedP99 <= schedule.OnTime:
		// Late while the client was idle and its goroutines got a CPU at
		// once: the evidence is the lateness, and the CPU figures say the
		// delay was not the client's own work.
		ph.ClientLimited = true
		ph.Notes = append(ph.Notes, quietLateNote(res, cpuNote))
	case dispatchLate:
		// The figure is the lateness note's "dispatcher's share": said
		// there once, not again here.
		ph.ClientLimited = true
		ph.Notes = append(ph.Notes, fmt.Sprintf("client-limited: the dispatcher handed ops out late (its share of the lateness over %v at p99, as the lateness note says; %s)",
			schedule.OnTime, cpuNote))
	case res.ClientLimited && res.MaxInFlight >= int64(res.Pool):
		ph.Notes = append(ph.Notes, fmt.Sprintf("client-limited: %s; the pool filled only while a backlog of late ops went out at once (reply p99 %v is far below the %v the pool takes to fill at the rate offered when it filled): the client stalled (%s)",
			res.ClientLimitedWhy, roundLat(time.Duration(res.Uncorrected.Quantile(99))), roundLat(time.Duration(float64(res.Pool)/res.OfferedRate(secs)*1e9)), cpuNote))
	case res.ClientLimited:
		ph.Notes = append(ph.Notes, "client-limited: "+res.ClientLimitedWhy+" ("+cpuNote+")")
	default:
		// The lateness note (schedule.Result.Notes) says whether ops went
		// out on schedule: this one says only whose limit it was not.
		ph.Notes = append(ph.Notes, "the client kept up ("+cpuNote+")")
	}
	endWithMachineLoad(ph, busy, client, cores)
	return cmp.Or(dropWhy, WhyClientDrop)
}

// poolFilledBy says whether a load's replies kept its pool full
// (poolFull), and whether the client's own scheduling delays were a good
// part of those replies (clientSlow). The pool was full because of the
// relay when its replies were slow enough to fill it: at this rate, Pool
// ops take Pool/rate to arrive; a p99 reply time of at least half that
// keeps every slot busy. A pool that filled only for an instant while
// replies were fast was a client stall (GC, CPU starvation) releasing a
// backlog of ops at once. The rate is the offered one when the pool
// filled (schedule.Result.OfferedRate: a spike's peak, not the average,
// at which the pool would take longer to fill). When the client's goroutines waited for a CPU a
// quarter of the reply time or more, the pool filled because the client
// was slow to read replies, not (only) because the relay was slow to send
// them.
func poolFilledBy(res *schedule.Result, secs float64, schedP99 time.Duration) (poolFull, clientSlow bool) {
	if res.MaxInFlight < int64(res.Pool) || secs <= 0 || res.Uncorrected.Count() == 0 {
		return false, false
	}
	fill := float64(res.Pool) / res.OfferedRate(secs) * 1e9 // ns
	unc := float64(res.Uncorrected.Quantile(99))
	return unc >= fill/2, schedP99 > schedule.OnTime && float64(schedP99) >= unc/4
}

// loadCPUNote is the CPU evidence load's notes quote: the client's cores
// busy of its own, the relay's when known, and how long the client's
// runnable goroutines waited for a CPU at p99 when measured.
func loadCPUNote(ph *results.Phase, secs, client, cores float64, schedP99 time.Duration) string {
	relayCPU := ""
	if ph.Resources.RelayCPUSecs > 0 && secs > 0 {
		relayCPU = fmt.Sprintf(", relay %.2f cores", ph.Resources.RelayCPUSecs/secs)
	}
	cpuNote := fmt.Sprintf("CPU: client %.2f of %.0f cores%s", client, cores, relayCPU)
	if schedP99 > 0 {
		cpuNote += fmt.Sprintf("; the client's runnable goroutines waited p99 %v for a CPU", roundLat(schedP99))
	}
	return cpuNote
}

// quietLateNote is the note of a load whose ops started late (or were
// dropped) while the client used little CPU and its runnable goroutines
// waited little for one: it quotes the lateness, the evidence of the
// judgement, and says the CPU figures put the delay outside the client's
// own work (its timer wake-ups came late: other processes on the machine,
// or the OS), so the figures are the machine's, not the relay's.
func quietLateNote(res *schedule.Result, cpuNote string) string {
	// The figures are the lateness note's: said there once, named here.
	late := fmt.Sprintf("ops started late (lateness p99 over %v", schedule.OnTime)
	if d := res.DispatchLateness; d != nil && d.Count() > 0 && d.Quantile(99) > int64(schedule.OnTime) {
		late = fmt.Sprintf("the dispatcher handed ops out late (its share of the lateness over %v at p99", schedule.OnTime)
	}
	late += ", as the lateness note says)"
	if res.Dropped > 0 {
		late += fmt.Sprintf(" and %s were dropped (not started within %v)", numfmt.Group(res.Dropped), res.MaxLateness)
	}
	if machineQuiet() {
		return fmt.Sprintf("client-limited: %s with at most %d of %d in-flight slots busy, while the client itself was not busy (%s): "+
			LateFromOutside+LateFromOS+", so these figures are the machine's, not the relay's",
			late, res.MaxInFlight, res.Pool, cpuNote)
	}
	return fmt.Sprintf("client-limited: %s with at most %d of %d in-flight slots busy, while the client itself was not busy (%s): "+
		LateFromOutside+lateFromOthers+", so these figures are the machine's, not the relay's; a quieter machine avoids it",
		late, res.MaxInFlight, res.Pool, cpuNote)
}

// The judgements of a load whose client's own work is in its reply times
// (find-max does not blame the relay for them: clientReadLate).
const (
	clientCPUSaturated = "client-limited: the client's CPU was saturated"
	clientSlowToRead   = "the client was slow to send and read"
)

// LateFromOutside is quietLateNote's judgement, which find-max's advice
// repeats: the client's lateness came from outside its own work. What from
// follows it: lateFromOthers on a machine whose load average reached its
// cores, else LateFromOS (no other process was busy enough to cause it).
const LateFromOutside = "its wake-ups came late from outside its own work"

// The causes quietLateNote gives after LateFromOutside.
const (
	lateFromOthers = " (other processes busy on this machine, or the OS)"
	// LateFromOS: a quiet machine (a walk saw "other processes busy" beside
	// a load average of 0.9 on 2 cores).
	LateFromOS = ", on a machine whose other processes were not busy (its load average below its cores): the OS or the virtual machine woke it late (timer and scheduling latency)"
)

// machineQuiet reports whether the machine's 1-minute load average is below
// its cores: a core was free on average (a test sets it).
var machineQuiet = func() bool {
	la, err := strconv.ParseFloat(sysinfo.LoadAvg(), 64)
	return err == nil && la < float64(runtime.NumCPU())
}

// SlotWaitPrefix begins the note of a load phase whose ops started late
// while every in-flight slot was busy waiting for replies, none dropped.
const SlotWaitPrefix = "ops waited for a free slot at times:"

// slotWaitNote is that note: some ops waited for a slot, every op started
// within --load-max-lateness, and the slots, held by the relay's replies,
// made them wait, not the client: the dispatcher handed ops out on time,
// or its share of the lateness (the lateness note's) was its wait for room
// in the queue in front of the full pool (the client neither busy nor kept
// from a CPU: clientBusy false), or the smaller part. It makes no claim
// that the relay kept up or not (the Little's-law note says whether the
// pool was too small).
func slotWaitNote(res *schedule.Result, cpuNote string, clientBusy bool) string {
	d, ok := dispatchP99(res)
	var who string
	switch {
	case !ok:
		who = "the dispatcher's share of the lateness was not measured"
	case d <= schedule.OnTime:
		who = fmt.Sprintf("the dispatcher handed ops out on time (its share of the lateness p99 %v)", roundLat(d))
	case !clientBusy:
		who = fmt.Sprintf("the dispatcher's share of the lateness (p99 %v) was its wait for room in the queue in front of the full pool, not a late wake-up: the client had CPU to spare and its goroutines waited far less than that for one", roundLat(d))
	default:
		who = fmt.Sprintf("the dispatcher's share of the lateness (p99 %v) was the smaller part", roundLat(d))
	}
	return fmt.Sprintf("%s some started late%s while %s (--load-pool) %s busy waiting for replies; none was dropped: every op started within --load-max-lateness (%v); %s: the slots, held by the relay's replies, made ops wait, not the client (%s)",
		SlotWaitPrefix, lateFigures(res), numfmt.AllOf(res.Pool, "in-flight slot"), numfmt.Were(res.Pool), res.MaxLateness, who, cpuNote)
}

// dispatcherLateNote is the note of a load whose ops started late, none
// dropped, every slot busy at times, when the client was late to start
// work (clientLateToStart): the slot waits were the smaller part.
func dispatcherLateNote(res *schedule.Result, cpuNote string) string {
	d, _ := dispatchP99(res)
	return fmt.Sprintf("client-limited: some ops started late%s because the dispatcher handed them out late (its share of the lateness p99 %v, half of it or more) while the client was busy or its goroutines waited for a CPU: the client was late to start work, not the relay; %s (--load-pool) %s busy at times too, but waiting for a free slot was the smaller part; none was dropped (%s)",
		lateFigures(res), roundLat(d), numfmt.AllOf(res.Pool, "in-flight slot"), numfmt.Were(res.Pool), cpuNote)
}

// lateFigures is the lateness figures, " (lateness p99 …, max …)", when
// known.
func lateFigures(res *schedule.Result) string {
	if res.Lateness == nil || res.Lateness.Count() == 0 {
		return ""
	}
	return fmt.Sprintf(" (lateness p99 %v, max %v)", roundLat(time.Duration(res.Lateness.Quantile(99))), roundLat(time.Duration(res.Lateness.Max())))
}

// dispatchP99 is the p99 of the dispatcher's share of the lateness (ok
// false: not measured).
func dispatchP99(res *schedule.Result) (time.Duration, bool) {
	if res.DispatchLateness == nil || res.DispatchLateness.Count() == 0 {
		return 0, false
	}
	return time.Duration(res.DispatchLateness.Quantile(99)), true
}

// clientWasBusy says whether the client could have been late to start
// work: its CPU at half its cores or more, or its runnable goroutines
// waiting for a CPU beyond schedule.OnTime at p99 and for a quarter or more
// of the dispatcher's share of the lateness (p99). A dispatcher woken late
// by such a wait holds back the ops due meanwhile by about as much, not by
// more: a share far beyond it was its wait for room in the queue in front
// of a pool the relay's replies kept full (a mixed load on a busy machine
// read the dispatcher's share p99 737ms, p50 8.49ms, beside lateness p50
// 789ms, while the goroutines waited p99 1.31ms: the slots, not the
// client, held the ops back).
func clientWasBusy(res *schedule.Result, client, cores float64, schedP99 time.Duration) bool {
	if client >= cores/2 {
		return true
	}
	if schedP99 <= schedule.OnTime {
		return false
	}
	d, ok := dispatchP99(res)
	return !ok || 4*schedP99 >= d
}

// clientLateToStart says, for ops that started late, whether the client
// was late to start work: the dispatcher's share of the lateness over
// schedule.OnTime and half of it or more at p99, while the client was busy
// or its goroutines waited for a CPU (clientBusy). The dispatcher's share
// alone is no evidence: it also counts its wait for room in the queue in
// front of a pool the relay's replies kept full (an op waiting there holds
// back the ops due after it).
func clientLateToStart(res *schedule.Result, clientBusy bool) bool {
	d, ok := dispatchP99(res)
	if !clientBusy || !ok || d <= schedule.OnTime {
		return false
	}
	return res.Lateness == nil || res.Lateness.Count() == 0 || 2*d >= time.Duration(res.Lateness.Quantile(99))
}

// schedLatencies reads the Go runtime's histogram of how long runnable
// goroutines waited to run (cumulative since the process started).
func schedLatencies() *rtmetrics.Float64Histogram {
	s := []rtmetrics.Sample{{Name: "/sched/latencies:seconds"}}
	rtmetrics.Read(s)
	if s[0].Value.Kind() != rtmetrics.KindFloat64Histogram {
		return nil
	}
	return s[0].Value.Float64Histogram()
}

// schedLatencyP99 is the p99 of the waits between two readings (the upper
// bound of its bucket); 0 when unknown.
func schedLatencyP99(a, b *rtmetrics.Float64Histogram) time.Duration {
	if a == nil || b == nil || len(a.Counts) != len(b.Counts) {
		return 0
	}
	var total uint64
	for i := range b.Counts {
		total += b.Counts[i] - a.Counts[i]
	}
	if total == 0 {
		return 0
	}
	want := uint64(math.Ceil(float64(total) * 0.99))
	var cum uint64
	for i := range b.Counts {
		cum += b.Counts[i] - a.Counts[i]
		if cum >= want {
			up := b.Buckets[i+1]
			if math.IsInf(up, 1) {
				up = b.Buckets[i]
			}
			return time.Duration(up * 1e9)
		}
	}
	return 0
}

// kindStats are one op kind's latencies in a mixed load (accepted ops),
// sharded by worker so that workers rarely share a lock; its counts come
// from the kind's account.
type kindStats struct {
	shards [8]kindShard
	sent   atomic.Int64 // ops of the kind written
}

type kindShard struct {
	mu       sync.Mutex
	lat, unc *metrics.Histogram
}

func newKindStats() *kindStats {
	ks := &kindStats{}
	for i := range ks.shards {
		ks.shards[i].lat, ks.shards[i].unc = metrics.NewHistogram(), metrics.NewHistogram()
	}
	return ks
}

func (ks *kindStats) record(w int, intended, warmEnd int64, out schedule.Outcome) {
	if out.Sent != 0 {
		ks.sent.Add(1)
	}
	if out.Err != nil || !out.Accepted {
		return
	}
	s := &ks.shards[w%len(ks.shards)]
	s.mu.Lock()
	defer s.mu.Unlock()
	if intended >= warmEnd {
		s.lat.Record(out.Done - intended)
		s.unc.Record(out.Done - out.Sent)
	}
}

func (ks *kindStats) group(name string, dur int64, a results.Account) results.Group {
	lat, unc := metrics.NewHistogram(), metrics.NewHistogram()
	g := results.Group{Name: name, Counts: map[string]int64{}, Rates: map[string]float64{}}
	for i := range ks.shards {
		s := &ks.shards[i]
		s.mu.Lock()
		lat.Merge(s.lat)
		unc.Merge(s.unc)
		s.mu.Unlock()
	}
	g.Counts[results.CountAccepted], g.Counts[results.CountRefused] = a.Accepted, a.Refused
	g.Counts[results.CountFailed] = a.TimedOut + a.ConnLost
	g.Counts["dropped"] = Drops(a)
	g.Counts["canceled"] = a.Cancelled
	if dur > 0 {
		g.Rates["accepted_per_sec"] = float64(g.Counts[results.CountAccepted]) / (float64(dur) / 1e9)
	}
	g.Latency = map[string]*results.Histogram{results.LatencyOK: lat.Result(), "ok_uncorrected": unc.Result()}
	return g
}

// liveRing is how many per-second latency histograms the live display
// keeps; lines are printed at most liveMaxLag after their second.
const (
	liveRing   = 8
	liveMaxLag = 5 * time.Second
)

// liveStats are the per-second counters behind the live lines. The line of
// second s is printed once ops intended in it can no longer start (after
// MaxLateness, at most liveMaxLag), so its dropped count is final.
type liveStats struct {
	t0       atomic.Int64 // mono ns of t = 0: the scheduler's start, from the first op
	end      atomic.Int64 // mono ns the schedule returned at; 0 while it runs
	off0     int64        // intended offset of the pattern's first op
	pattern  schedule.Pattern
	intended []int64 // per second, from the pattern
	lag      time.Duration
	// per second: started by intended second; sent by send second; replies
	// by reply second; max in flight by start second.
	started, sent, accepted, refused, failed, maxIn []atomic.Int64
	inFlight                                        atomic.Int64
	hist                                            [liveRing]struct {
		mu  sync.Mutex
		sec int
		h   *metrics.Histogram
	}
}

func newLiveStats(p schedule.Pattern, maxLate time.Duration) *liveStats {
	n := int(p.Duration()/time.Second) + 2
	l := &liveStats{intended: make([]int64, n), off0: -1, pattern: p}
	for off := range schedule.IntendedTimes(p) {
		if l.off0 < 0 {
			l.off0 = int64(off)
		}
		l.intended[min(int(off/time.Second), n-1)]++
	}
	if maxLate <= 0 {
		maxLate = schedule.DefaultMaxLateness
	}
	l.lag = min(maxLate, liveMaxLag) + 100*time.Millisecond
	// Replies come up to the drain after the pattern: room for a minute more.
	m := n + 60
	l.started, l.sent, l.accepted, l.refused, l.failed, l.maxIn = make([]atomic.Int64, m), make([]atomic.Int64, m),
		make([]atomic.Int64, m), make([]atomic.Int64, m), make([]atomic.Int64, m), make([]atomic.Int64, m)
	for i := range l.hist {
		l.hist[i].h = metrics.NewHistogram()
		l.hist[i].sec = i
	}
	return l
}

// sec maps a mono time to its second, clamped to the arrays.
func (l *liveStats) sec(t int64) int {
	s := int((t - l.t0.Load()) / 1e9)
	return max(0, min(s, len(l.sent)-1))
}

func (l *liveStats) warmEnd(w time.Duration) int64 { return l.t0.Load() + int64(w) }

// start books an op starting. The scheduler's t = 0 is intended − off0 for
// its first op and larger for every later one, so the minimum seen is it.
func (l *liveStats) start(intended int64) {
	if t := intended - l.off0; t < l.t0.Load() {
		for {
			cur := l.t0.Load()
			if t >= cur || l.t0.CompareAndSwap(cur, t) {
				break
			}
		}
	}
	l.started[l.sec(intended)].Add(1)
	n := l.inFlight.Add(1)
	m := &l.maxIn[l.sec(mono.Now())]
	for {
		cur := m.Load()
		if n <= cur || m.CompareAndSwap(cur, n) {
			break
		}
	}
}

func (l *liveStats) finish(intended int64, out schedule.Outcome) {
	l.inFlight.Add(-1)
	l.sent[l.sec(out.Sent)].Add(1)
	s := l.sec(out.Done)
	switch {
	case out.Err != nil:
		l.failed[s].Add(1)
		return
	case !out.Accepted:
		l.refused[s].Add(1)
		return // the latency shown is of accepted ops
	}
	l.accepted[s].Add(1)
	h := &l.hist[s%liveRing]
	h.mu.Lock()
	if h.sec == s {
		h.h.Record(out.Done - intended)
	}
	h.mu.Unlock()
}

// line formats second s and recycles its histogram for second s+liveRing;
// counts group their thousands and latencies keep three significant
// figures (numfmt.Dur) as the summary's do; "–" for a second in which no
// op was accepted. Its columns go in an op's order: intended and dropped
// count the ops intended in s, sent those sent in s, in-flight the most
// at once; after "ended:", accepted, refused and failed count the ops
// that ended in s, sent in s or before (a reply to an op of an earlier
// second), and p50/p99 are of those accepted.
func (l *liveStats) line(name string, s int) string {
	g := numfmt.Group
	h := &l.hist[s%liveRing]
	h.mu.Lock()
	p50, p99 := "–", "–" // no op accepted in this second: no latency
	if h.sec == s && h.h.Count() > 0 {
		p50, p99 = numfmt.Dur(time.Duration(h.h.Quantile(50))), numfmt.Dur(time.Duration(h.h.Quantile(99)))
	}
	h.h.Reset()
	h.sec = s + liveRing
	h.mu.Unlock()
	var intended int64
	if s < len(l.intended) {
		intended = l.intended[s]
	}
	span := l.span(s)
	if span < time.Second {
		intended = l.intendedBefore(s, span)
	}
	dropped := max(0, intended-l.started[s].Load())
	if span < time.Second {
		// The run ended inside this second: its counts, not per-second rates.
		return fmt.Sprintf("%s t=%3ds last %s: intended %s dropped %s sent %s in-flight %s ended: accepted %s refused %s failed %s p50 %s p99 %s",
			name, s, numfmt.Dur(span), g(intended), g(dropped), g(l.sent[s].Load()), g(l.maxIn[s].Load()),
			g(l.accepted[s].Load()), g(l.refused[s].Load()), g(l.failed[s].Load()), p50, p99)
	}
	return fmt.Sprintf("%s t=%3ds intended %7s/s dropped %6s sent %7s/s in-flight %5s ended: accepted %7s/s refused %5s failed %5s p50 %9s p99 %9s",
		name, s, g(intended), g(dropped), g(l.sent[s].Load()), g(l.maxIn[s].Load()),
		g(l.accepted[s].Load()), g(l.refused[s].Load()), g(l.failed[s].Load()), p50, p99)
}

// intendedBefore counts the ops of second s intended in its first span: all
// of them unless the run stopped before the pattern's end (then the ops
// after it were cancelled, not dropped).
func (l *liveStats) intendedBefore(s int, span time.Duration) int64 {
	from, to := time.Duration(s)*time.Second, time.Duration(s)*time.Second+span
	if s < len(l.intended) && to >= l.pattern.Duration() {
		return l.intended[s]
	}
	var n int64
	for off := range schedule.IntendedTimes(l.pattern) {
		if off >= to {
			break
		}
		if off >= from {
			n++
		}
	}
	return n
}

// span is how much of second s the run lasted: a whole second, or from its
// start to the schedule's return (at least 10 ms, so that it reads as
// time), or 0 for a second the run did not reach (stopped early).
func (l *liveStats) span(s int) time.Duration {
	end := l.end.Load()
	if end == 0 {
		return time.Second
	}
	in := end - l.t0.Load() - int64(s)*1e9
	if in <= 0 {
		return 0
	}
	return time.Duration(min(int64(time.Second), max(int64(10*time.Millisecond), in)))
}

// roundLat keeps the three significant digits a reader can use.
func roundLat(d time.Duration) string { return numfmt.Dur(d) }

// print writes a line per second to w until stop is called, then the lines
// not printed yet (all final once the run is over).
func (l *liveStats) print(w io.Writer, name string) (stop func()) {
	if w == nil {
		return func() {}
	}
	quit := make(chan struct{})
	done := make(chan struct{})
	next := 0
	last := len(l.intended) - 1 // the pattern's seconds
	go func() {
		defer close(done)
		timer := time.NewTimer(time.Hour)
		defer timer.Stop()
		for next <= last {
			due := l.t0.Load() + int64(next+1)*1e9 + int64(l.lag)
			if wait := due - mono.Now(); wait > 0 {
				timer.Reset(time.Duration(min(wait, int64(time.Second))))
				select {
				case <-quit:
					return
				case <-timer.C:
				}
				continue
			}
			if l.span(next) == 0 {
				return // the run stopped before this second: stop says no more
			}
			fmt.Fprintln(w, l.line(name, next))
			next++
		}
	}()
	return func() {
		close(quit)
		<-done
		for ; next <= last; next++ {
			if l.intended[next] == 0 && l.sent[next].Load() == 0 && l.accepted[next].Load() == 0 {
				continue // the partial second after the pattern's end, empty
			}
			if l.span(next) == 0 {
				break // the run stopped before this second
			}
			fmt.Fprintln(w, strings.TrimRight(l.line(name, next), " "))
		}
	}
}
