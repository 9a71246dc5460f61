package workload

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/relaybench/relaybench/flagcheck"
	"github.com/relaybench/relaybench/internal/mono"
	"github.com/relaybench/relaybench/metrics"
	"github.com/relaybench/relaybench/nostr"
	"github.com/relaybench/relaybench/outcome"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/verify"
	"github.com/relaybench/relaybench/wire"
)

// CountShapes are the COUNT filters, in the order they rotate: the query
// shapes, then NIP-45's own two, "followers" (kind 3 with one #p: who
// follows a key) and "reactions" (kind 7 with one #e: reactions to a
// note), the filters for which NIP-45 defines HyperLogLog answers.
var CountShapes = append(append([]string(nil), Shapes...), "followers", "reactions")

// buildCount is build for the COUNT shapes.
func (b *shapeBuilder) buildCount(shape string) (nostr.Filter, bool) {
	var kind int
	var tag string
	switch shape {
	case "followers":
		kind, tag = 3, "p"
	case "reactions":
		kind, tag = 7, "e"
	default:
		return b.build(shape)
	}
	for range 256 {
		if e := b.pick(); e.Kind == kind {
			if v := e.TagValue(tag); v != "" {
				return nostr.Filter{Kinds: []int{kind}, Tags: map[string][]string{tag: {v}}, Limit: b.limit}, true
			}
		}
	}
	return nostr.Filter{}, false
}

func init() {
	Declare[CountOptions](Decl{Name: "count", Brief: "NIP-45 COUNT, 100", Input: NeedsCorpus, JudgesSet: true, NIP: 45, What: "COUNT",
		Summary: "NIP-45 COUNT: publish the corpus, then COUNT each query shape; latency vs REQ, and every count checked against what the relay accepted."})
}

// CountOptions configure the NIP-45 COUNT workload. Base's Timeout bounds
// the wait for a COUNT's answer and for a REQ's EOSE.
type CountOptions struct {
	Base    `kong:"-" set:"timeout=10s"`
	Queries int `name:"queries" default:"100" help:"COUNT requests (NIP-45), rotating through the query shapes, each filter without a limit."`
	// Limit is the limit of the REQ sent after each COUNT with the same
	// filter, for comparison (the COUNT's filter has no limit).
	Limit int  `name:"query-limit" default:"100" help:"Limit of the REQ sent after each COUNT with the same filter, to compare COUNT and REQ→EOSE latency."`
	NoReq bool `name:"no-req" help:"Send no comparison REQs: COUNTs only."`
	// RelayCap is the relay's NIP-11 limitation.max_limit (0: none): it caps
	// the comparison REQs, not the counts (default: env's).
	RelayCap int `kong:"-"`
	Force
}

// Run counts on env's relay, checking every count against what it
// accepted in the publish phase.
func (o CountOptions) Run(ctx context.Context, env Env) ([]results.Phase, error) {
	applyDefaults(&o)
	serialEnv(&o.Base, &o.RelayCap, env, "Counting (NIP-45)", "COUNT query", "COUNT queries", o.Queries)
	return onePhase(Count(ctx, env.URL, env.Model, env.source(), o))
}

// countRecord is one COUNT (and its comparison REQ), kept for verification
// after the timed window.
type countRecord struct {
	shape    string
	filter   nostr.Filter // the shape's filter without its limit
	ended    wire.QueryEnd
	count    int64
	hasCount bool
	approx   bool
	hll      bool
	bad      string
	bare     bool  // the answer was a bare integer (count holds it), not {"count": n}
	latency  int64 // COUNT write → COUNT answer
	err      string
	req      *queryRecord // the same filter with the limit, as a REQ
}

// Count runs the NIP-45 COUNT workload on one connection: for each filter
// (the query shapes, drawn from source, without a limit) a COUNT, then,
// unless NoReq, a REQ with the same filter and Limit. With a model (what
// the relay accepted in this run) every exact count must equal the number
// of accepted events that match, in either reading of replaceable events
// (NIP-01 lets a relay keep superseded versions); a count the relay marks
// "approximate" or sends with "hll" registers is named with its error, not
// failed.
func Count(ctx context.Context, url string, model *verify.Model, source []*nostr.Event, o CountOptions) (results.Phase, error) {
	applyDefaults(&o)
	recs, err := drawCounts(source, o)
	if err != nil {
		return results.Phase{}, err
	}
	c := &countLoop{o: o, recs: recs}
	ph, err := runSerial(ctx, url, o.Base, serialPhase{
		name: "count", op: results.OpCount, silent: "COUNTs or REQs ended without an answer (timed out or connection lost)",
		requested: o.Queries, drawn: len(recs), undrawn: "no filter could be drawn from the events", compare: !o.NoReq,
		counters: []string{results.CountCounts, results.CountFailed, results.CountTimedOut, "events_counted", "count_exact", "count_approximate"},
		params: map[string]any{
			"queries": len(recs), "req_limit": o.Limit, "timeout": o.Timeout.String(), "shapes": CountShapes,
			"nip": 45, "compare_req": !o.NoReq,
		},
		step: c.step,
	})
	if err != nil {
		return results.Phase{}, err
	}
	countGroups(&ph, recs, model, o)
	return ph, ctx.Err()
}

// drawCounts draws the COUNT filters (the query shapes, drawn from source,
// without a limit) and their comparison REQs (with Limit), before the
// clock.
func drawCounts(source []*nostr.Event, o CountOptions) ([]*countRecord, error) {
	b, err := newShapeBuilder(source, o.Limit, o.Seed)
	if err != nil {
		return nil, err
	}
	var recs []*countRecord
	for i := 0; len(recs) < o.Queries && i < o.Queries*4; i++ {
		shape := CountShapes[i%len(CountShapes)]
		if f, ok := b.buildCount(shape); ok {
			cf := f
			cf.Limit = 0
			recs = append(recs, &countRecord{shape: shape, filter: cf, req: &queryRecord{shape: shape, filter: f}})
		}
	}
	return recs, nil
}

// countLoop is the COUNT workload's own loop: each COUNT, then its
// comparison REQ, on the serial engine's connection.
type countLoop struct {
	o      CountOptions
	recs   []*countRecord
	silent int // COUNTs in a row that got no answer
}

// step sends COUNT i, then its comparison REQ, and books how each ended.
func (c *countLoop) step(ctx context.Context, s *serialRun, cn *wire.Conn, i int) {
	r := c.recs[i]
	cctx, cancel := context.WithTimeout(ctx, c.o.Timeout)
	cr, err := cn.Count(cctx, "c"+strconv.Itoa(i), []nostr.Filter{r.filter})
	cancel()
	k := bookCount(s.q.user, s.led, s.series, r, cr, err, c.o.Timeout)
	s.q.wd.Book(k)
	// The REQs in between answering is progress for the watchdog; a
	// relay that answers REQs but never COUNTs is stopped here.
	if k != outcome.TimedOut {
		c.silent = 0
	} else if c.silent++; c.silent == 3 {
		s.q.wd.Abort("3 COUNTs in a row got no answer (the comparison REQs were answered)")
	}
	if !c.o.NoReq && ctx.Err() == nil && cn.Err() == nil {
		s.query(ctx, cn, "r"+strconv.Itoa(i), r.req)
	}
}

// bookCount books how one COUNT ended.
func bookCount(user context.Context, led *outcome.Ledger, series *metrics.Series, r *countRecord, cr wire.CountResult, err error, timeout time.Duration) outcome.Kind {
	now := mono.Now()
	switch cr.Ended {
	case wire.EndCount:
		led.Add(outcome.Accepted, "")
		r.ended, r.latency = cr.Ended, cr.End-cr.Sent
		r.count, r.hasCount, r.approx, r.hll, r.bad, r.bare = cr.Count, cr.HasCount, cr.Approximate, cr.HLL != "", cr.BadObject, cr.Bare
		series.Add(now, "counts", 1)
		series.Latency(now, r.latency)
		return outcome.Accepted
	case wire.EndClosed:
		led.Add(outcome.Refused, outcome.RefusalClass(cr.Class))
		r.ended, r.err = cr.Ended, "CLOSED: "+cr.Reason
		series.Add(now, "failed", 1)
		return outcome.Refused
	}
	err = noAnswer(err, cr.Err)
	kind := led.BookErr(user, err)
	switch kind {
	case outcome.TimedOut:
		r.ended, r.err = wire.EndTimeout, fmt.Sprintf("no COUNT answer within %v", timeout)
		series.Add(now, "failed", 1)
	case outcome.ConnLost:
		r.ended, r.err = wire.EndConnError, "connection lost before the COUNT answer: "+err.Error()
		series.Add(now, "failed", 1)
	default: // cancelled, or the phase stopped: not run
		r.ended, r.err = "", ""
	}
	return kind
}

// countCheck is the verdict on one COUNT answer.
type countCheck struct {
	expected int64 // accepted events matching, in the reading nearest the answer
	wrong    bool  // an exact count that matches neither reading
	relErr   float64
	kept     bool // the count matched only the reading that keeps superseded versions
}

// checkCount compares a count with the model: the matching accepted events
// with only the latest version of replaceable events, and with every
// accepted version. Events published without a decisive answer may or may
// not be counted: each reading allows a range (verify.Model.CountRange),
// and expected is the nearest end of it.
func checkCount(r *countRecord, model *verify.Model) countCheck {
	f := r.filter
	lo, hi := model.CountRange(&f, verify.LatestOnly)
	klo, khi := model.CountRange(&f, verify.KeepsSuperseded)
	nl := clamp(r.count, int64(lo), int64(hi))
	na := clamp(r.count, int64(klo), int64(khi))
	c := countCheck{expected: nl}
	switch r.count {
	case nl:
	case na:
		c.expected, c.kept = na, true
	default:
		if abs64(r.count-na) < abs64(r.count-nl) {
			c.expected = na
		}
		c.wrong = !r.approx && !r.hll
	}
	if c.expected > 0 {
		c.relErr = math.Abs(float64(r.count-c.expected)) / float64(c.expected)
	} else if r.count != 0 {
		c.relErr = 1
	}
	return c
}

// clamp is n within [lo, hi].
func clamp(n, lo, hi int64) int64 { return min(max(n, lo), hi) }

func abs64(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}

// countGroups fills the phase's counts, latencies, per-shape groups and the
// verification of the counts (and of the comparison REQs).
func countGroups(ph *results.Phase, recs []*countRecord, model *verify.Model, o CountOptions) {
	t := newShapeTally(ph, results.CountCounts, results.LatencyCount, "COUNT", "events_counted")
	j := &countJudge{t: t, model: model, o: o, ph: ph, allReq: metrics.NewHistogram(), req: map[string]*metrics.Histogram{}}
	for _, r := range recs {
		if r.ended == "" && r.err == "" {
			continue // never run
		}
		s := t.of(r.shape, model != nil)
		j.comparison(r)
		if r.ended != wire.EndCount {
			t.failed(s, r.ended, r.err)
			continue
		}
		t.answered(s, r.latency, 0)
		j.judge(s, r)
	}
	j.figures()
	total := &results.Verification{Verified: model != nil}
	t.finish(CountShapes, results.RateCounts, "", total)
	for i := range ph.Groups {
		g := &ph.Groups[i]
		h := j.req[g.Name]
		if h == nil {
			continue
		}
		if h.Count() > 0 {
			g.Latency["req_eose"] = h.Result()
		}
		if r := p50Ratio(t.shapes[g.Name].lat, h); r > 0 {
			g.Rates["count_vs_req_p50"] = r
		}
	}
	j.notes(total)
	if model != nil && model.Prior {
		total.Notes = append(total.Notes, "the relay held events before the run began: a count may include its earlier data, so only a count below the accepted events it must include was judged wrong")
	}
	verify.Finish(total)
	j.comparisonVerdict(total)
	ph.Verification = total
}

// countJudge checks COUNT answers against what the relay accepted, and
// keeps the comparison REQs' figures.
type countJudge struct {
	t                                                    *shapeTally
	model                                                *verify.Model
	o                                                    CountOptions
	ph                                                   *results.Phase
	allReq                                               *metrics.Histogram
	req                                                  map[string]*metrics.Histogram // comparison REQ→EOSE by shape
	reqRecs                                              []*queryRecord
	approxErrs                                           []float64
	approxN, hllN, keptN, wrongN, badN, bareN, bareRight int64
	examples                                             []string
}

// comparison books the comparison REQ sent after r, if it ran.
func (j *countJudge) comparison(r *countRecord) {
	if r.req.ended == "" && r.req.err == "" {
		return
	}
	j.reqRecs = append(j.reqRecs, r.req)
	s := j.t.of(r.shape, j.model != nil)
	j.t.add(s, "req_events_returned", r.req.returned)
	if r.req.ended != "eose" {
		j.ph.Errors = verify.AppendUnique(j.ph.Errors, r.shape+" comparison REQ: "+r.req.err)
		return
	}
	h := j.req[r.shape]
	if h == nil {
		h = metrics.NewHistogram()
		j.req[r.shape] = h
	}
	h.Record(r.req.latency)
	j.allReq.Record(r.req.latency)
	if r.req.first > 0 {
		j.t.first.Record(r.req.first)
	}
}

// judge checks the count r answered into s.
func (j *countJudge) judge(s *shapeAcc, r *countRecord) {
	v := s.ver
	v.Checked++
	if !r.hasCount {
		j.malformed(v, r)
		return
	}
	j.t.add(s, "events_counted", r.count)
	v.Returned += r.count
	switch {
	case r.hll:
		j.hllN++
		s.g.Counts["approximate"]++
	case r.approx:
		j.approxN++
		s.g.Counts["approximate"]++
	default:
		s.g.Counts["exact"]++
		j.ph.Counts["count_exact"]++
	}
	if j.model == nil {
		return
	}
	c := checkCount(r, j.model)
	v.Expected += c.expected
	if r.approx || r.hll {
		j.approxErrs = append(j.approxErrs, c.relErr)
		return
	}
	if c.kept {
		j.keptN++
	}
	if c.wrong {
		j.wrong(s, v, r, c)
	}
}

// malformed books a COUNT answer without a valid count: invalid.
func (j *countJudge) malformed(v *results.Verification, r *countRecord) {
	j.badN++
	v.Invalid++
	if !r.bare {
		v.Notes = verify.AppendUnique(v.Notes, "COUNT answers whose object has no valid count: "+r.bad)
		return
	}
	j.bareN++
	v.Notes = verify.AppendUnique(v.Notes, `COUNT answered with a bare number (["COUNT",<id>,n]), not an object {"count": n} (NIP-45)`)
	if j.model != nil && !checkCount(r, j.model).wrong {
		j.bareRight++
	}
}

// wrong books an exact count outside what the accepted events allow.
func (j *countJudge) wrong(s *shapeAcc, v *results.Verification, r *countRecord, c countCheck) {
	j.wrongN++
	s.g.Counts["wrong"]++
	if r.count < c.expected {
		v.Missing += c.expected - r.count
	} else {
		v.Extra += r.count - c.expected
	}
	if len(j.examples) < 5 {
		j.examples = append(j.examples, fmt.Sprintf("%s %s: counted %d, %d accepted events match", r.shape, r.filter.AppendJSON(nil), r.count, c.expected))
	}
	if j.o.RelayCap > 0 && r.count == int64(j.o.RelayCap) && c.expected > r.count {
		v.Notes = verify.AppendUnique(v.Notes, fmt.Sprintf("counts stop at the relay's max_limit %d: NIP-45 counts every matching event", j.o.RelayCap))
	}
}

// figures puts the phase's COUNT counters and the comparison with REQ
// into ph.
func (j *countJudge) figures() {
	ph := j.ph
	ph.Counts["count_approximate"] = j.approxN + j.hllN
	if j.hllN > 0 {
		ph.Counts["count_hll"] = j.hllN
	}
	ph.Counts["count_wrong"] = j.wrongN
	if j.badN > 0 {
		ph.Counts["count_malformed"] = j.badN
	}
	if j.allReq.Count() > 0 {
		ph.Latency["req_eose"] = j.allReq.Result()
	}
	ph.Rates = map[string]float64{}
	if r := p50Ratio(j.t.all, j.allReq); r > 0 {
		ph.Rates["count_vs_req_p50"] = r
	}
}

// notes names in total what the counts showed that is not a count.
func (j *countJudge) notes(total *results.Verification) {
	add := func(s string) { total.Notes = verify.AppendUnique(total.Notes, s) }
	for _, ex := range j.examples {
		add("wrong count: " + ex)
	}
	if j.bareN > 0 && j.model != nil {
		add(fmt.Sprintf("%d COUNT answers were bare numbers, not {\"count\": n} (invalid: a NIP-45 client cannot read them); %d of them equal the accepted events that match", j.bareN, j.bareRight))
	}
	if j.keptN > 0 {
		add(fmt.Sprintf("%d counts include superseded versions of replaceable events (NIP-01 lets a relay keep them): checked that way", j.keptN))
	}
	if n := int64(len(j.approxErrs)); n > 0 {
		var sum, worst float64
		for _, e := range j.approxErrs {
			sum += e
			worst = max(worst, e)
		}
		add(fmt.Sprintf("%d approximate counts (%d \"approximate\": true, %d with HyperLogLog \"hll\"): named, not failed; error vs the accepted events: mean %.1f%%, worst %.1f%%",
			n, j.approxN, j.hllN, 100*sum/float64(n), 100*worst))
		j.ph.Rates["approximate_mean_error"] = sum / float64(n)
	} else if j.approxN+j.hllN > 0 {
		add(fmt.Sprintf("%d approximate counts (\"approximate\" or \"hll\"); nothing published in this run to compare them with", j.approxN+j.hllN))
	}
	if j.model == nil {
		total.Notes = append(total.Notes, "nothing was published in this run, so the right counts cannot be known: counts are reported, not checked")
	} else if n := len(j.model.Unknown); n > 0 {
		total.Notes = append(total.Notes, fmt.Sprintf("%d events whose OK never came (timed out, connection lost or cancelled) may or may not be stored: each count was judged right anywhere from the matches without them to the matches with them", n))
	}
	if n := j.ph.Counts[results.CountFailed]; n > 0 {
		total.Notes = append(total.Notes, fmt.Sprintf("%d COUNTs got no count (CLOSED, timeout or connection loss): not checked; the outcomes line says which", n))
	}
}

// comparisonVerdict verifies the comparison REQs: a failure there fails
// the phase's verification too.
func (j *countJudge) comparisonVerdict(total *results.Verification) {
	if len(j.reqRecs) == 0 {
		return
	}
	rv := verifyQueries(j.reqRecs, j.model, j.o.RelayCap).total
	j.ph.Counts["req_queries"] = int64(len(j.reqRecs))
	if rv.Semantics != "" {
		total.Semantics = rv.Semantics
	}
	if rv.Status() != results.VerificationFailed {
		return
	}
	total.Fail()
	total.Notes = verify.AppendUnique(total.Notes, fmt.Sprintf("the comparison REQs (same filters, limit %d) failed verification: %d missing, %d extra, %d not matching, %d invalid, %d duplicated",
		j.o.Limit, rv.Missing, rv.Extra, rv.NotMatching, rv.Invalid, rv.Duplicated))
	for _, n := range rv.Notes {
		total.Notes = verify.AppendUnique(total.Notes, "comparison REQs: "+n)
	}
}

// p50Ratio is the median COUNT latency over the median REQ→EOSE latency of
// the same filters (0 when either has no sample).
func p50Ratio(count, req *metrics.Histogram) float64 {
	if count.Count() == 0 || req.Count() == 0 {
		return 0
	}
	c, r := count.Result().Percentiles["50"], req.Result().Percentiles["50"]
	if r <= 0 {
		return 0
	}
	return float64(c) / float64(r)
}

// Check checks the options as the CLI's flags set them (Checked): the
// COUNTs, and the comparison REQs' answers from in's corpus.
func (o CountOptions) Check(r *flagcheck.Ranges, in CheckInput) {
	r.Queries(o.Queries, o.Limit, in.Events, in.Size)
}
