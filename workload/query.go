package workload

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/relaybench/relaybench/internal/mono"
	"github.com/relaybench/relaybench/metrics"
	"github.com/relaybench/relaybench/nostr"
	"github.com/relaybench/relaybench/outcome"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/verify"
	"github.com/relaybench/relaybench/wire"
)

// QueryOptions configure the query phase.
type QueryOptions struct {
	Base        `set:"timeout=10s"`
	Queries     int // total queries (-queries)
	Limit       int // limit of each filter (-query-limit)
	Connections int // concurrent query connections (default 1: latency without self-contention)
	// RelayCap is the relay's per-REQ cap announced in NIP-11
	// limitation.max_limit (0: not announced; it is then inferred).
	RelayCap int
	// RecordAnswers keeps every answer in the phase (results.Phase.Answers)
	// for relaybench merge: an execution segment's answers are checked
	// against all segments' events there (see answers.go), REQs of several
	// filters as their union.
	RecordAnswers bool
	// Shapes are the query shapes the queries rotate through, one Group
	// each (nil: the reference suite's Shapes; ParseMix makes the others).
	// A shape the source events cannot make hit is skipped with a note.
	Shapes []string
	// Name is the phase's name (default "query").
	Name string
	// Segment runs only this segment's share of the queries: every segment
	// draws the same filters, query k is segment k mod N's (zero: all).
	Segment Segment
}

func (o *QueryOptions) defaults() {
	if o.Queries <= 0 {
		o.Queries = 100
	}
	if o.Limit <= 0 {
		o.Limit = 100
	}
	if o.Connections <= 0 {
		o.Connections = 1
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	if len(o.Shapes) == 0 {
		o.Shapes = Shapes
	}
	if o.Name == "" {
		o.Name = "query"
	}
}

// queryRecord is one executed query, kept for verification after the timed
// window (parsing and signature checks are never timed).
type queryRecord struct {
	shape    string
	filter   nostr.Filter         // the REQ's (first) filter
	more     []nostr.Filter       // the REQ's other filters, for shapes clients send as several
	replaced []nostr.Filter       // the filters of the open subscription the REQ replaced (clientIDs)
	aside    int64                // events set aside as the replaced subscription's (see setAside)
	raws     [][]byte             // the answer's events kept for verification (see hold)
	returned int64                // events the answer held before EOSE or its end
	excess   results.Verification // events not kept, checked when the answer came (see hold)
	latency  int64                // REQ write → EOSE
	first    int64                // REQ write → first EVENT (0 if none)
	sent     int64                // REQ write (mono)
	ended    string
	err      string
}

// hold keeps what verification needs of the answer once its end is booked:
// a complete answer (EOSE) trimmed to the events judged against the
// expected set, the rest checked now (verify.Checker.Trim), so that the
// answers a phase holds until they are judged together stay bounded by
// their limits, not by what a relay chooses to send; nothing of an answer
// that did not end with EOSE (never verified). whole keeps a complete
// answer whole (NIP-50 results come by relevance, not newest first: search
// judges them all). sigs may be nil.
func (r *queryRecord) hold(sigs *verify.Checker, relayCap int, whole bool) {
	r.returned = int64(len(r.raws)) + r.aside
	if r.ended != "eose" {
		r.raws = nil
		return
	}
	if whole {
		return
	}
	if sigs == nil {
		sigs = verify.NewChecker()
	}
	r.raws, r.excess = sigs.TrimFilters(r.filterPtrs(), r.raws, relayCap)
}

// req is the REQ's filters.
func (r *queryRecord) req() []nostr.Filter {
	return append([]nostr.Filter{r.filter}, r.more...)
}

// filterPtrs is the REQ's filters as the verifier takes them.
func (r *queryRecord) filterPtrs() []*nostr.Filter {
	out := []*nostr.Filter{&r.filter}
	for i := range r.more {
		out = append(out, &r.more[i])
	}
	return out
}

// Query runs the query phase. model is what the relay should hold (nil when
// relaybench did not publish in this run: results are then checked only for
// validity and filter match). source gives the events filters are drawn from.
func Query(ctx context.Context, url string, model *verify.Model, source []*nostr.Event, o QueryOptions) (results.Phase, error) {
	o.defaults()
	recs, skipped, err := buildMix(source, o)
	if err != nil {
		return results.Phase{}, err
	}
	requested, recs := segmentShare(o.Segment, o.Queries, recs)
	q, pctx, err := dialQueries(ctx, url, o.Connections, o.Base, "queries ended without EOSE (timed out or connection lost)")
	if err != nil {
		return results.Phase{}, err
	}
	defer q.close()
	q.o, q.recs, q.sigs, q.led = o, recs, verify.NewChecker(), outcome.New(results.OpQuery, int64(requested))
	q.model = model
	q.led.AddN(outcome.NotRun, "no filter could be drawn from the events", int64(requested-len(recs)))

	var wg sync.WaitGroup
	w := o.open(q.setup)
	q.series = metrics.NewSeries(w.Start).Times(metrics.TimesEOSE)
	for c := range o.Connections {
		wg.Add(1)
		go func() { defer wg.Done(); q.worker(pctx, c) }()
	}
	wg.Wait()
	w.Close(0)
	o.progress(q.done.Load())
	q.wd.Settle(q.led, outcome.WhyConnGone)
	ph := q.phase(w)
	w.Finish(&ph)
	ph.Notes = append(ph.Notes, skipped...)
	shapeGroups(&ph, o.Shapes, recs, verifyQueries(recs, model, o.RelayCap))
	if o.RecordAnswers {
		ph.Answers = recordAnswers(recs)
	}
	return ph, ctx.Err()
}

// buildQueries draws every filter before the clock starts, rotating through
// the shapes (o.Shapes, or the reference Shapes).
func buildQueries(source []*nostr.Event, o QueryOptions) ([]*queryRecord, error) {
	recs, _, err := buildMix(source, o)
	return recs, err
}

// buildMix is buildQueries over the shapes the source events can make hit;
// it also says, in one line each, which shapes it skipped and why.
func buildMix(source []*nostr.Event, o QueryOptions) ([]*queryRecord, []string, error) {
	b, err := newShapeBuilder(source, o.Limit, o.Seed)
	if err != nil {
		return nil, nil, err
	}
	all := o.Shapes
	if len(all) == 0 {
		all = Shapes
	}
	var shapes, skipped []string
	for _, s := range all {
		if why := b.unavailable(s); why != "" {
			skipped = append(skipped, "shape "+s+" skipped: "+why)
			continue
		}
		shapes = append(shapes, s)
	}
	recs := make([]*queryRecord, 0, o.Queries)
	for i := 0; len(shapes) > 0 && len(recs) < o.Queries && i < o.Queries*4; i++ {
		shape := shapes[i%len(shapes)]
		if fs, ok := b.buildReq(shape); ok {
			recs = append(recs, &queryRecord{shape: shape, filter: fs[0], more: fs[1:]})
		}
	}
	return recs, skipped, nil
}

// queryRun is one query phase in progress: connections, the queries, their
// ledger and watchdog.
type queryRun struct {
	user   context.Context
	url    string
	o      QueryOptions
	recs   []*queryRecord
	set    *connSet // the phase's connections
	setup  int64    // when the dialling of set began (mono)
	led    *outcome.Ledger
	wd     *outcome.Watchdog
	series *metrics.Series
	sigs   *verify.Checker // checks the events of answers trimmed as they come
	model  *verify.Model   // what the relay should hold (nil: nothing published in this run)
	whole  bool            // keep complete answers whole (search)
	next   atomic.Int64
	done   atomic.Int64
}

// dialQueries dials n connections to url (b's Dial settings) for requests
// answered one by one, and starts the watchdog that stops the phase once 3
// of them in a row end without an answer (silent says so): the run, its
// options b's timeout (the caller sets the rest), and the phase's context.
// close ends both.
func dialQueries(ctx context.Context, url string, n int, b Base, silent string) (*queryRun, context.Context, error) {
	setup := mono.Now()
	set, err := dialSet(ctx, url, n, b.Dial)
	if err != nil {
		return nil, nil, err
	}
	pctx, wd := outcome.NewWatchdog(ctx, 3, silent)
	return &queryRun{user: ctx, url: url, o: QueryOptions{Base: Base{Timeout: b.Timeout}}, set: set, setup: setup, wd: wd}, pctx, nil
}

// close stops the watchdog and closes the connections.
func (q *queryRun) close() {
	q.wd.Stop()
	q.set.close()
}

// worker runs queries one at a time on connection w until none is left or
// the phase stops.
func (q *queryRun) worker(ctx context.Context, w int) {
	ids := clientIDs{subIDs: subIDs{prefix: "q" + strconv.Itoa(w) + "-"}, model: q.model}
	for ctx.Err() == nil {
		cn := q.set.get(ctx, w)
		if cn == nil {
			return
		}
		k := q.next.Add(1) - 1
		if k >= int64(len(q.recs)) {
			return
		}
		r := q.recs[k]
		qctx, cancel := context.WithTimeout(ctx, q.o.Timeout)
		qr, err := ids.query(qctx, cn, r)
		cancel()
		q.wd.Book(q.book(r, qr, err))
		if d := q.done.Add(1); d%10 == 0 {
			q.o.progress(d)
		}
	}
}

// subIDs names a connection's REQs as clients do: one subscription id per
// shape, reused by each of its queries (the wire client CLOSEs a REQ once
// answered; NIP-01: a later REQ under the id is a new subscription). An id
// is reused only when whatever the relay sent under it after its CLOSE has
// come first: the connection's previous REQ was another shape's and its
// answer ended (EOSE or CLOSED) after that CLOSE, on the same ordered
// stream, and the id's own last answer ended so too; else the shape takes
// a fresh id, so that no stray event of a closed subscription, nor a late
// one of an answer still under way (timed out, over the cap), is taken for
// the next answer's.
type subIDs struct {
	prefix  string
	gen     map[string]int  // shape → its id's generation (0: unused)
	stale   map[string]bool // shapes whose last REQ did not end with EOSE or CLOSED
	last    string          // the shape of the connection's previous REQ
	settled bool            // the previous REQ ended with EOSE or CLOSED
}

// next is the id of shape's next REQ.
func (s *subIDs) next(shape string) string {
	if s.gen == nil {
		s.gen, s.stale = map[string]int{}, map[string]bool{}
	}
	if g := s.gen[shape]; g == 0 || !s.settled || s.last == shape || s.stale[shape] {
		s.gen[shape]++
		s.stale[shape] = false
	}
	if g := s.gen[shape]; g > 1 {
		return s.prefix + shape + "-" + strconv.Itoa(g)
	}
	return s.prefix + shape
}

// ended notes how shape's REQ ended.
func (s *subIDs) ended(shape string, how wire.QueryEnd) {
	s.last, s.settled = shape, how == wire.EndEOSE || how == wire.EndClosed
	s.stale[shape] = !s.settled // an answer perhaps still under way: never again
}

// book books how one REQ ended and keeps what verification needs.
func (q *queryRun) book(r *queryRecord, qr wire.QueryResult, err error) outcome.Kind {
	k := q.bookEnd(r, qr, err)
	r.hold(q.sigs, q.o.RelayCap, q.whole)
	return k
}

// bookEnd books how one REQ ended in the ledger, the series and r.
func (q *queryRun) bookEnd(r *queryRecord, qr wire.QueryResult, err error) outcome.Kind {
	now := mono.Now()
	k := bookQueryEnd(q.user, q.led, r, qr, err, q.o.Timeout)
	switch {
	case k == outcome.Accepted:
		q.series.Add(now, "queries", 1)
		q.series.Latency(now, r.latency)
	case r.ended != "": // refused, timed out, lost, over the cap
		q.series.Add(now, "failed", 1)
	}
	return k
}

// bookQueryEnd books how one REQ ended in led and r, the one REQ booker of
// every workload: EOSE accepted; CLOSED refused (by class); no end timed
// out or connection lost; an answer over the client's cap refused (not
// verified); stopped by the user cancelled, by the phase not run (neither
// is verified).
func bookQueryEnd(user context.Context, led *outcome.Ledger, r *queryRecord, qr wire.QueryResult, err error, timeout time.Duration) outcome.Kind {
	r.raws, r.sent = qr.Events, qr.Sent
	if qr.FirstEvent > 0 {
		r.first = qr.FirstEvent - qr.Sent
	}
	switch qr.Ended {
	case wire.EndEOSE:
		led.Add(outcome.Accepted, "")
		r.ended, r.latency = "eose", qr.End-qr.Sent
		return outcome.Accepted
	case wire.EndClosed:
		led.Add(outcome.Refused, outcome.RefusalClass(qr.Class))
		r.ended, r.err = "closed", "CLOSED: "+qr.Reason
		return outcome.Refused
	}
	err = noAnswer(err, qr.Err)
	k := led.BookErr(user, err)
	switch k {
	case outcome.TimedOut:
		r.ended, r.err = string(wire.EndTimeout), fmt.Sprintf("no EOSE within %v", timeout)
	case outcome.ConnLost:
		r.ended, r.err = string(qr.Ended), "connection lost before EOSE: "+err.Error()
	case outcome.Refused: // the answer outgrew the client's cap: not verified
		r.ended, r.err, r.raws = string(wire.EndOverCap), err.Error(), nil
	default: // cancelled by the user, or the phase stopped: not run
		r.ended, r.err, r.raws = "", "", nil
	}
	return k
}

// noAnswer is why a request ended without its answer: the call's error,
// else the result's, else the connection closed.
func noAnswer(err, resultErr error) error {
	if err != nil {
		return err
	}
	if resultErr != nil {
		return resultErr
	}
	return wire.ErrClosed
}

// phase is the query phase's frame: parameters, window, account, protocol
// counters.
func (q *queryRun) phase(w *Window) results.Phase {
	ph := q.frame(w, q.o.Name, "query", q.series, q.led,
		results.CountQueries, results.CountFailed, results.CountTimedOut, results.CountEventsReturned)
	ph.Params = map[string]any{
		"queries": len(q.recs), "limit": q.o.Limit, "connections": q.o.Connections,
		"timeout": q.o.Timeout.String(), "shapes": q.o.Shapes,
	}
	return ph
}

// frame is the frame of a phase of requests answered one by one (REQs,
// COUNTs, searches): w's phase name (op) with counters zeroed, why it
// stopped, series, the statistics of q's connections, and led's account,
// the phase's first, mirrored in its cancelled, not_run and refused
// counters.
func (q *queryRun) frame(w *Window, name, op string, series *metrics.Series, led *outcome.Ledger, counters ...string) results.Phase {
	ph := w.Phase(name, op)
	for _, k := range counters {
		ph.Counts[k] = 0
	}
	ph.Aborted, ph.Series = q.wd.Aborted(), series.Result(w.End)
	q.set.report(q.user, &ph)
	a := led.Result()
	ph.Accounts = append(ph.Accounts, a)
	ph.Counts["cancelled"] = a.Cancelled
	ph.Counts["not_run"] = a.NotRun
	ph.Counts[results.CountRefused] = a.Refused
	return ph
}

// shapeGroups fills the phase's counts, latency, rates and per-shape groups
// (in the order of shapes) from the queries that ran, with their
// verification.
func shapeGroups(ph *results.Phase, shapes []string, recs []*queryRecord, ver queryVerification) {
	t := newShapeTally(ph, results.CountQueries, results.LatencyEOSE, "query", results.CountEventsReturned)
	for _, r := range recs {
		if r.ended == "" && r.err == "" {
			continue // never run (interrupted, or the phase stopped)
		}
		s := t.of(r.shape, false)
		t.add(s, results.CountEventsReturned, r.returned)
		if r.ended != "eose" {
			t.failed(s, wire.QueryEnd(r.ended), r.err)
			continue
		}
		t.answered(s, r.latency, r.first)
	}
	before := len(ph.Groups)
	t.finish(shapes, results.RateQueries, results.RateEventsReturned, nil)
	for i := before; i < len(ph.Groups); i++ {
		ph.Groups[i].Verification = ver.byShape[ph.Groups[i].Name]
	}
	ph.Verification = ver.total
	if n := ph.Counts[results.CountFailed]; n > 0 {
		ph.Verification.Notes = append(ph.Verification.Notes,
			fmt.Sprintf("%d queries did not end with EOSE (CLOSED, timeout or connection loss): their answers are incomplete and were not verified; the outcomes line says which", n))
	}
}

type queryVerification struct {
	total   *results.Verification
	byShape map[string]*results.Verification
}

// verifyQueries checks every answer that ended with EOSE with the one
// verifier (valid id and signature, matches its filter, returned once) and,
// when a model is given, against what the relay should have returned. The
// reading of replaceable events (latest only, or keeps superseded versions)
// is chosen once from all the answers; each shape's figures use it.
func verifyQueries(recs []*queryRecord, model *verify.Model, relayCap int) queryVerification {
	sigs := verify.NewChecker()
	var replies []verify.Reply
	var done []*queryRecord
	for _, r := range recs {
		if r.ended != "eose" {
			continue
		}
		evs, bad := sigs.Events(r.raws)
		done = append(done, r)
		replies = append(replies, verify.Reply{Filters: r.filterPtrs(), Events: evs, Invalid: bad})
	}
	j := verify.Judge(replies, model, relayCap, true)
	out := queryVerification{total: &results.Verification{Verified: model != nil}, byShape: map[string]*results.Verification{}}
	shapeAnswers := map[string][]int{}
	for i, r := range done {
		verify.Add(&j.Answers[i], &r.excess) // the events trimmed off when the answer came
		j.Answers[i].Returned += r.aside
		v := out.byShape[r.shape]
		if v == nil {
			v = &results.Verification{Verified: model != nil}
			out.byShape[r.shape] = v
		}
		verify.Add(v, &j.Answers[i])
		verify.Add(out.total, &j.Answers[i])
		shapeAnswers[r.shape] = append(shapeAnswers[r.shape], i)
	}
	j.Apply(out.total)
	for s, v := range out.byShape {
		j.Apply(v, shapeAnswers[s]...)
	}
	if j.Cap > 0 {
		out.total.Notes = append(out.total.Notes, verify.CapNote(j.Cap))
	}
	out.total.Notes = append(out.total.Notes, replacedNotes(done)...)
	if model == nil {
		out.total.Notes = append(out.total.Notes, "nothing was published in this run, so missing and extra events cannot be known: only validity and filter match were checked")
	}
	for _, v := range append([]*results.Verification{out.total}, mapValues(out.byShape)...) {
		verify.Finish(v)
	}
	return out
}

func mapValues(m map[string]*results.Verification) []*results.Verification {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]*results.Verification, 0, len(m))
	for _, k := range keys {
		out = append(out, m[k])
	}
	return out
}
