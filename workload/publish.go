// Package workload runs the timed phases of a benchmark against one relay and
// returns them in the results-file form: publish (closed loop or pipelined),
// query by filter shape with verification, and the live and load workloads.
//
// Every workload gets its events from a pre-signed corpus: nothing is signed
// or generated inside a timed window.
package workload

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/relaybench/relaybench/corpus"
	"github.com/relaybench/relaybench/internal/mono"
	"github.com/relaybench/relaybench/internal/numfmt"
	"github.com/relaybench/relaybench/metrics"
	"github.com/relaybench/relaybench/outcome"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/verify"
	"github.com/relaybench/relaybench/wire"
)

// Publish modes.
const (
	ModeWait     = "wait"     // one EVENT in flight per connection: send, wait for its OK, send the next
	ModePipeline = "pipeline" // up to Window unacknowledged EVENTs per connection; every OK still read and matched
)

// PublishOptions configure the publish phase.
type PublishOptions struct {
	Base        `set:"timeout=10s"`
	Connections int    // concurrent connections (-concurrency)
	Mode        string // ModeWait or ModePipeline
	Window      int    // pipelined: max unacknowledged EVENTs per connection
}

func (o *PublishOptions) defaults() error {
	if o.Connections <= 0 {
		o.Connections = 10
	}
	if o.Mode == "" {
		o.Mode = ModeWait
	}
	if o.Mode != ModeWait && o.Mode != ModePipeline {
		return fmt.Errorf("publish mode %q: want %q or %q", o.Mode, ModeWait, ModePipeline)
	}
	if o.Window <= 0 {
		o.Window = 64
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	return nil
}

// Outcome of one event.
type Outcome uint8

// Outcomes of a published event.
const (
	NotSent Outcome = iota
	Accepted
	Refused
	Duplicate // refused with "duplicate:": the relay says it already holds the event
	TimedOut
	Failed    // connection lost or write error before an OK
	Cancelled // the user stopped the run before the OK
)

// PublishResult is what the relay said about each event, for the phases that
// verify against it.
type PublishResult struct {
	Phase    results.Phase
	Outcomes []Outcome // by corpus index; NotSent for events not in this phase (1 byte per event)
	// Reasons are the first maxReasonSamples reasons given, by corpus
	// index (a sample: the phase's notes count every reason).
	Reasons map[int]string
}

// maxReasonSamples bounds PublishResult.Reasons, and maxReasonLabels the
// distinct reasons counted in the notes: a relay that refuses millions of
// events with a different text each must not grow the client's memory.
const (
	maxReasonSamples = 1000
	maxReasonLabels  = 200
)

// AcceptedIndexes returns the corpus indexes of accepted events.
func (p *PublishResult) AcceptedIndexes() []int {
	var out []int
	for i, o := range p.Outcomes {
		if o == Accepted {
			out = append(out, i)
		}
	}
	return out
}

// StoredIndexes returns the corpus indexes of events the relay should now
// hold: those it accepted and those it refused as "duplicate:" (it says it
// already has them, e.g. from an earlier run against the same relay).
func (p *PublishResult) StoredIndexes() []int {
	var out []int
	for i, o := range p.Outcomes {
		if o == Accepted || o == Duplicate {
			out = append(out, i)
		}
	}
	return out
}

type pubWorker struct {
	hist     *metrics.Histogram // OK latency of accepted events only
	refHist  *metrics.Histogram // OK latency of refusals (reported apart, labelled)
	sent     int64
	bytes    int64
	accBytes int64 // wire bytes of the accepted events (publish phase)
	accepted int64
	refused  map[string]int64
	timedOut int64
	failed   int64
	errs     []string
}

// Publish sends the corpus events at indexes (nil: every event, in order)
// to url and waits for every OK.
// The timed window starts when the first EVENT is written and ends when the
// last OK (or timeout) is in; dialing is not timed (it is the phase's
// SetupSecs), and the relay's resources are sampled over the timed window.
func Publish(ctx context.Context, url string, c *corpus.Corpus, indexes []int, o PublishOptions) (*PublishResult, error) {
	if err := o.defaults(); err != nil {
		return nil, err
	}
	if o.Mode == ModeWait && (o.Dial.OKTimeout <= 0 || o.Dial.OKTimeout > o.Timeout) {
		// Each connection expires its own overdue EVENTs (a sweep every
		// Timeout/4): no timer is armed and stopped per EVENT.
		o.Dial.OKTimeout = o.Timeout
	}
	if o.Mode == ModeWait && maxEventSize(c, indexes) <= sharedWaitMax {
		// The OKs are read by a shared reader (one epoll set for the
		// connections, waited on in Go's netpoller; see wire's
		// poll_linux.go), whose OK callbacks write the next EVENTs
		// (publishWait): no goroutine per connection wakes between an OK
		// and the next EVENT. Larger events keep a goroutine per connection: a write
		// waiting for room would hold up the other connections' OKs.
		o.Dial.SharedReader = true
	}
	setup := mono.Now()
	conns, err := wire.DialPool(ctx, url, o.Connections, o.Dial)
	if err != nil {
		return nil, err
	}
	defer closeAll(conns)

	n := len(indexes)
	if indexes == nil {
		n = c.Len()
	}
	res := &PublishResult{Outcomes: make([]Outcome, c.Len()), Reasons: map[int]string{}}
	var reasonsMu sync.Mutex
	tally := &reasonTally{counts: map[string]int{}}
	setOutcome := func(idx int, oc Outcome, reason string) {
		res.Outcomes[idx] = oc // each index is owned by exactly one sender
		if reason != "" {
			reasonsMu.Lock()
			if len(res.Reasons) < maxReasonSamples {
				res.Reasons[idx] = reason
			}
			tally.add(oc, reason)
			reasonsMu.Unlock()
		}
	}
	led := outcome.New(results.OpEvent, int64(n))
	pctx, wd := outcome.NewWatchdog(ctx, max(3, 2*len(conns)), "EVENTs without an OK (timed out or connection lost)")
	defer wd.Stop()
	bk := &booker{user: ctx, led: led, wd: wd, set: setOutcome, tally: tally, size: c.SizeAt}

	var next, done atomic.Int64
	src := &pubSource{c: c, indexes: indexes, n: int64(n), slack: int64(len(conns) * max(1, o.Window))}
	workers := make([]*pubWorker, len(conns))
	w := o.open(setup)
	bk.series = metrics.NewSeries(w.Start).Times(metrics.TimesOK)
	var wg sync.WaitGroup
	for w := range conns {
		pw := newPubWorker()
		workers[w] = pw
		wg.Add(1)
		go func(cn *wire.Conn) {
			defer wg.Done()
			if o.Mode == ModeWait {
				publishWait(pctx, cn, src, &next, &done, pw, bk, o)
			} else {
				publishPipelined(pctx, cn, src, &next, &done, pw, bk, o)
			}
		}(conns[w])
	}
	stopProgress := progressTicker(o.Progress, &done)
	wg.Wait()
	w.Close(0)
	stopProgress()
	wd.Settle(led, outcome.WhyConnGone)

	res.Phase = publishPhase(ctx, src, o, res, workers, conns, bk, w)
	w.Finish(&res.Phase)
	if err := ctx.Err(); err != nil {
		return res, err
	}
	return res, nil
}

// sharedWaitMax is the largest event publishWait writes from a shared
// reader thread: one EVENT always fits an idle socket's send buffer (16 KiB
// by default on Linux), so the write never waits for room.
const sharedWaitMax = 15 << 10

// maxEventSize is the largest wire size among the events to publish.
func maxEventSize(c *corpus.Corpus, indexes []int) int {
	m := 0
	if indexes == nil {
		for i := range c.Len() {
			m = max(m, c.SizeAt(i))
		}
		return m
	}
	for _, i := range indexes {
		m = max(m, c.SizeAt(i))
	}
	return m
}

// publishPhase builds the publish phase from what the publishers measured:
// the account, counters, OK latency of accepted events (refusals apart),
// rates, series and notes.
func publishPhase(ctx context.Context, src *pubSource, o PublishOptions, res *PublishResult,
	workers []*pubWorker, conns []*wire.Conn, bk *booker, w *Window) results.Phase {
	ph := w.Phase("publish", "publish")
	ph.Params = map[string]any{
		"mode": o.Mode, "connections": o.Connections, "window": o.Window,
		"timeout": o.Timeout.String(), "events": src.n,
	}
	ph.Aborted = bk.wd.Aborted()
	hist, refHist := mergePublishers(&ph, workers, int(src.n))
	bookAccount(&ph, bk.led.Result())
	var accBytes int64 // counted as the OKs came: the events are not read again
	for _, pw := range workers {
		accBytes += pw.accBytes
	}
	ph.Counts["bytes_accepted"] = accBytes
	ph.Notes = append(ph.Notes, bk.tally.notes()...)
	addConnStats(ctx, &ph, conns)
	ph.Latency[results.LatencyOK] = hist.Result()
	if refHist.Count() > 0 {
		ph.Latency["ok_refused"] = refHist.Result()
	}
	ph.Rates = map[string]float64{}
	if ph.Duration > 0 {
		ph.Rates[results.RateEvents] = results.PerSecond(ph.Counts[results.CountAccepted], ph.Duration)
		ph.Rates[results.RateSent] = results.PerSecond(ph.Counts[results.CountSent], ph.Duration)
		ph.Rates[results.RateMB] = results.PerSecond(ph.Counts[results.CountBytesSent], ph.Duration) / 1e6
	}
	ph.Series = bk.series.Result(w.End)
	if o.Mode == ModeWait {
		ph.Notes = append(ph.Notes, fmt.Sprintf("closed loop: %s, one EVENT in flight each; OK latency is EVENT write → OK read of accepted events only (refusals are timed apart)", numfmt.Count(o.Connections, "connection")))
	} else {
		ph.Notes = append(ph.Notes, fmt.Sprintf("pipelined: up to %d unacknowledged EVENTs per connection; OK latency is EVENT write → OK read of accepted events, so it includes the relay's queue", o.Window))
	}
	return ph
}

// booker books the answers to published events: the ledger, the watchdog,
// the per-event outcomes and the series.
type booker struct {
	user   context.Context
	led    *outcome.Ledger
	wd     *outcome.Watchdog
	set    func(int, Outcome, string)
	series *metrics.Series
	tally  *reasonTally
	size   func(idx int) int // wire size of event idx (nil: not counted)
}

// pubSource is the events a publish phase sends: the corpus events at
// indexes, or every event in order when indexes is nil.
type pubSource struct {
	c       *corpus.Corpus
	indexes []int
	n       int64
	slack   int64 // events that may still be in flight behind the newest taken
}

// at is the corpus index of the k-th event to send.
func (s *pubSource) at(k int64) int {
	if s.indexes == nil {
		return int(k)
	}
	return s.indexes[k]
}

// take is called with each k taken: every 1,024 events it lets the corpus
// give back the pages of events sent long enough ago (well behind
// everything in flight), so that a streamed corpus's resident memory stays
// flat whatever its length.
func (s *pubSource) take(k int64) {
	if k%1024 == 0 && k > s.slack {
		s.c.ReleaseBefore(s.at(k - s.slack))
	}
}

// progressTicker reports done to progress every 250 ms until the returned
// stop is called (which reports once more).
func progressTicker(progress func(int64), done *atomic.Int64) (stop func()) {
	if progress == nil {
		return func() {}
	}
	report := func() { progress(done.Load()) }
	end := every(250*time.Millisecond, report)
	return func() { end(); report() }
}

// every calls tick every d, from a goroutine of its own, until the
// returned stop is called; stop returns once the goroutine has ended.
func every(d time.Duration, tick func()) (stop func()) {
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				tick()
			case <-quit:
				return
			}
		}
	}()
	return func() { close(quit); <-done }
}

func newPubWorker() *pubWorker {
	return &pubWorker{hist: metrics.NewHistogram(), refHist: metrics.NewHistogram(), refused: map[string]int64{}}
}

// bookAccount puts an account into the phase and mirrors it in the classic
// counters (accepted, refused, timed_out, failed = connection lost,
// not_sent = not run, cancelled).
func bookAccount(ph *results.Phase, a results.Account) {
	ph.Accounts = append(ph.Accounts, a)
	if a.Op != results.OpEvent {
		return
	}
	ph.Counts[results.CountAccepted] = a.Accepted
	ph.Counts[results.CountRefused] = a.Refused
	ph.Counts[results.CountTimedOut] = a.TimedOut
	ph.Counts[results.CountFailed] = a.ConnLost
	ph.Counts["not_sent"] = a.NotRun
	ph.Counts["cancelled"] = a.Cancelled
	ph.Refused = map[string]int64{}
	for k, v := range a.RefusedBy {
		ph.Refused[k] = v
	}
}

// publishWait keeps one EVENT in flight on cn until the events are taken:
// the callback of each OK books it and writes the next EVENT at once, on the
// goroutine that read the OK (the connection's reader), so no goroutine
// hand-off, and no wake-up of an idle thread for it, sits between reading an
// OK and writing the next EVENT. Every OK is still matched by id (wire) and
// booked (bk). It returns once the chain ends: events exhausted, connection
// lost, or ctx done (the EVENT then in flight is ended at once).
func publishWait(ctx context.Context, cn *wire.Conn, src *pubSource, next, done *atomic.Int64,
	pw *pubWorker, bk *booker, _ PublishOptions) {
	ch := &waitChain{ctx: ctx, cn: cn, src: src, next: next, done: done, pw: pw, bk: bk, end: make(chan struct{})}
	ch.send()
	select {
	case <-ch.end:
		return
	case <-ctx.Done():
	}
	// Expire what is in flight (ErrTimeout, booked cancelled for a user's
	// cancel), again while a send that raced the cancel may still register.
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for {
		cn.ExpireBefore(mono.Now() + 1)
		select {
		case <-ch.end:
			return
		case <-t.C:
		}
	}
}

// waitChain is one connection's closed loop of publishWait.
type waitChain struct {
	ctx        context.Context
	cn         *wire.Conn
	src        *pubSource
	next, done *atomic.Int64
	pw         *pubWorker // touched by one goroutine at a time: the chain's order
	bk         *booker
	end        chan struct{}
	once       sync.Once
}

func (ch *waitChain) finish() { ch.once.Do(func() { close(ch.end) }) }

// send writes the next EVENT (its OK calls answered, which calls send), or
// ends the chain. An EVENT that could not be sent is booked here.
func (ch *waitChain) send() {
	for {
		if ch.ctx.Err() != nil || ch.cn.Err() != nil {
			ch.finish()
			return
		}
		k := ch.next.Add(1) - 1
		if k >= ch.src.n {
			ch.finish()
			return
		}
		ch.src.take(k)
		idx := ch.src.at(k)
		raw := ch.src.c.RawAt(idx)
		id := ch.src.c.IDAt(idx)
		size := int64(len(raw))
		// The deadline is the connection's OKTimeout sweep (set by Publish):
		// an overdue EVENT gets ErrTimeout from it, a late OK is unmatched.
		err := ch.cn.SendEvent(id, raw, func(ok wire.OK) { ch.answered(ok, idx, size) })
		if err == nil {
			return
		}
		if !errors.Is(err, wire.ErrClosed) {
			ch.pw.sent++
			ch.pw.bytes += size
		}
		ch.bk.record(wire.OK{ID: id, Recv: mono.Now(), Err: err}, err, idx, ch.pw)
		ch.done.Add(1)
		if ch.cn.Err() != nil {
			ch.lost()
			return
		}
	}
}

// answered books the answer to event idx (an OK, or ErrTimeout/ErrClosed)
// and sends the next EVENT.
func (ch *waitChain) answered(ok wire.OK, idx int, size int64) {
	ch.pw.sent++
	ch.pw.bytes += size
	ch.bk.record(ok, ok.Err, idx, ch.pw)
	ch.done.Add(1)
	if ok.Err != nil && ch.cn.Err() != nil {
		ch.lost()
		return
	}
	ch.send()
}

// lost ends the chain on a lost connection: the remaining events go to the
// other connections, or are settled as not run.
func (ch *waitChain) lost() {
	ch.pw.errs = append(ch.pw.errs, "connection lost: "+ch.cn.Err().Error())
	ch.finish()
}

func publishPipelined(ctx context.Context, cn *wire.Conn, src *pubSource, next, done *atomic.Int64,
	pw *pubWorker, bk *booker, o PublishOptions) {
	slots := make(chan struct{}, o.Window)
	var mu sync.Mutex // guards pw and the histogram: done runs on the reader goroutine
	var inflight sync.WaitGroup
	defer expireOverdue(cn, o.Timeout)()

	for ctx.Err() == nil {
		k := next.Add(1) - 1
		if k >= src.n {
			break
		}
		src.take(k)
		idx := src.at(k)
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
		case <-cn.Done():
		}
		if ctx.Err() != nil || cn.Err() != nil {
			if cn.Err() != nil {
				mu.Lock()
				pw.errs = append(pw.errs, "connection lost: "+cn.Err().Error())
				mu.Unlock()
			}
			next.Add(-1) // not taken: it stays open for the ledger to settle
			break
		}
		err := sendWindowed(cn, src.c.IDAt(idx), src.c.RawAt(idx), slots, &inflight, &mu, pw, func(ok wire.OK, err error) {
			mu.Lock()
			bk.record(ok, err, idx, pw)
			mu.Unlock()
			done.Add(1)
		})
		if err != nil {
			mu.Lock()
			pw.errs = append(pw.errs, "send: "+err.Error())
			mu.Unlock()
			if cn.Err() != nil {
				break
			}
		}
	}
	awaitOKs(ctx, cn, &inflight, o.Timeout, func(s string) {
		mu.Lock()
		pw.errs = append(pw.errs, s)
		mu.Unlock()
	})
}

// expireOverdue expires, every 100 ms, the EVENTs sent on cn whose OK is
// overdue (sent more than timeout ago); the returned function stops it.
func expireOverdue(cn *wire.Conn, timeout time.Duration) (stop func()) {
	return every(100*time.Millisecond, func() { cn.ExpireBefore(mono.Now() - int64(timeout)) })
}

// awaitOKs waits for the OKs still in flight on cn (inflight): overdue
// ones expire and a dead connection fails them, so the wait is bounded.
// When ctx is done (the user or the watchdog stopped the phase) they are
// ended at once: booked cancelled or not run, never timed out. A wait past
// timeout + 5 s is given up and said through note.
func awaitOKs(ctx context.Context, cn *wire.Conn, inflight *sync.WaitGroup, timeout time.Duration, note func(string)) {
	waitDone := make(chan struct{})
	go func() { inflight.Wait(); close(waitDone) }()
	if ctx.Err() != nil {
		cn.ExpireBefore(mono.Now() + 1)
	}
	select {
	case <-waitDone:
	case <-time.After(timeout + 5*time.Second):
		note("gave up waiting for OKs still in flight")
	}
}

// mergePublishers adds the publishers' tallies to ph (sent, bytes, errors)
// and returns their merged OK latency histograms: accepted and refused.
// Outcome counters come from the ledger (bookAccount).
func mergePublishers(ph *results.Phase, workers []*pubWorker, events int) (hist, refHist *metrics.Histogram) {
	hist, refHist = metrics.NewHistogram(), metrics.NewHistogram()
	for _, pw := range workers {
		hist.Merge(pw.hist)
		refHist.Merge(pw.refHist)
		ph.Counts[results.CountSent] += pw.sent
		ph.Counts[results.CountBytesSent] += pw.bytes
		ph.Errors = verify.AppendUnique(ph.Errors, pw.errs...)
	}
	return hist, refHist
}

// record books one OK (or its failure) for event idx.
func (b *booker) record(ok wire.OK, err error, idx int, pw *pubWorker) {
	k, _ := b.led.Book(b.user, ok, err)
	b.wd.BookErr(k, err)
	oc, reason := credit(k, ok, pw, b.series, true, mono.Now())
	b.set(idx, oc, reason)
	if oc == Accepted && b.size != nil {
		pw.accBytes += int64(b.size(idx))
	}
}

// credit records a booked OK in the publisher's histograms (accepted and
// refused apart) and the series, and returns the per-event outcome and the
// reason to keep.
func credit(k outcome.Kind, ok wire.OK, pw *pubWorker, series *metrics.Series, latSeries bool, now int64) (Outcome, string) {
	switch k {
	case outcome.Accepted:
		lat := ok.Recv - ok.Sent
		pw.hist.Record(lat)
		series.Add(now, "accepted", 1)
		if latSeries {
			series.Latency(now, lat)
		}
		return Accepted, ""
	case outcome.Refused:
		pw.refHist.Record(ok.Recv - ok.Sent)
		series.Add(now, "refused", 1)
		if ok.Class == wire.ClassDuplicate {
			return Duplicate, ok.Reason
		}
		return Refused, ok.Reason
	case outcome.TimedOut:
		series.Add(now, "timed_out", 1)
		return TimedOut, "no OK before the deadline"
	case outcome.ConnLost:
		series.Add(now, "failed", 1)
		return Failed, "connection lost before the OK"
	case outcome.Cancelled:
		return Cancelled, ""
	}
	return NotSent, ""
}

// addConnStats adds the connections' protocol counters to ph: malformed
// frames, OKs for ids never sent (or answered twice) and EVENTs under
// subscription ids never opened are NIP-01 violations (errors); late OKs,
// events after a CLOSE and answers over the client's cap are named in notes.
func addConnStats(_ context.Context, ph *results.Phase, conns []*wire.Conn) {
	var notices []string
	var pc protoCounts
	for _, cn := range conns {
		st := cn.Stats()
		ph.Counts[results.CountMalformedFrames] += st.Malformed
		pc.add(st)
		ph.Counts["notices"] += st.Notices
		ph.Counts["bytes_received"] += st.BytesIn
		notices = verify.AppendUnique(notices, cn.Notices()...)
	}
	pc.into(ph)
	addAuthStats(ph, conns) // NIP-42 round trips, apart (auth.go)
	for _, n := range notices {
		if len(ph.Notes) > 20 {
			break
		}
		ph.Notes = append(ph.Notes, "relay NOTICE: "+n)
	}
	if ph.Counts[results.CountMalformedFrames] > 0 {
		ph.Errors = append(ph.Errors, fmt.Sprintf("relay sent %d malformed frames", ph.Counts[results.CountMalformedFrames]))
	}
}

// protoCounts are the connections' NIP-01 protocol counters (wire.Stats)
// that tell a relay's violations from what the client's own limits caused.
type protoCounts struct {
	late, foreign, unsolicited, afterClose, overCap int64
}

func (p *protoCounts) add(st wire.Stats) {
	p.late += st.LateOK
	p.foreign += st.ForeignOK
	p.unsolicited += st.UnsolicitedEvents
	p.afterClose += st.EventsAfterClose
	p.overCap += st.AnswersOverCap
}

// Error texts of the protocol violations (findmax.go carries them over).
const (
	foreignOKsError = "relay sent %d OKs for events never sent on their connection or already answered (not credited; NIP-01: \"OK messages MUST be sent in response to EVENT messages received from clients\")"
	unsolicitedErr  = "relay sent %d EVENTs under subscription ids never opened on their connection (NIP-01: \"EVENT messages MUST be sent only with a subscription ID related to a subscription previously initiated by the client\")"
)

// into books the counters in ph: the violations (foreign OKs, unsolicited
// EVENTs) as counts and errors, the rest as counts and notes.
func (p protoCounts) into(ph *results.Phase) {
	ph.Counts[results.CountForeignOKs] += p.foreign
	ph.Counts[results.CountUnsolicitedEvents] += p.unsolicited
	for k, n := range map[string]int64{"late_oks": p.late, "events_after_close": p.afterClose, "answers_over_cap": p.overCap} {
		if n > 0 {
			ph.Counts[k] += n
		}
	}
	if p.foreign > 0 {
		ph.Errors = append(ph.Errors, fmt.Sprintf(foreignOKsError, p.foreign))
	}
	if p.unsolicited > 0 {
		ph.Errors = append(ph.Errors, fmt.Sprintf(unsolicitedErr, p.unsolicited))
	}
	if p.late > 0 {
		ph.Notes = append(ph.Notes, fmt.Sprintf("%s arrived after their events had timed out or been cancelled (not credited)", numfmt.Count(p.late, "OK")))
	}
	if p.afterClose > 0 {
		ph.Notes = append(ph.Notes, fmt.Sprintf("%s arrived for subscriptions relaybench had already closed, not counted as answers: in flight when the relay got the CLOSE, or sent after it (NIP-01: new events SHOULD be sent \"until the connection is closed, a CLOSE event is received with the same <subscription_id>\"…; no MUST forbids them)", numfmt.Count(p.afterClose, "EVENT")))
	}
	if p.overCap > 0 {
		ph.Notes = append(ph.Notes, fmt.Sprintf("%s outgrew the client's cap before EOSE (default 2 × max(the filter's limit, 5,000) + 100 events; --max-answer-events, --max-answer-bytes): collection stopped and the subscription was closed; each is booked refused (%s), neither credited nor verified (NIP-01: relays SHOULD use limit, \"returning (much) more should be avoided to prevent overwhelming clients\")", numfmt.Count(p.overCap, "answer"), outcome.OverCap))
	}
}

// reasonSamples lists the distinct refusal and failure reasons with how often
// each occurred, most frequent first, so a reader sees what the relay said.
func reasonSamples(reasons map[int]string, outcomes []Outcome) []string {
	t := &reasonTally{counts: map[string]int{}}
	for idx, r := range reasons {
		t.add(outcomes[idx], r)
	}
	return t.notes()
}

// reasonTally counts refusal and failure reasons by text, at most
// maxReasonLabels distinct ones (the rest counted together).
type reasonTally struct {
	counts map[string]int
	other  int
}

func (t *reasonTally) add(oc Outcome, r string) {
	label := "refused"
	switch oc {
	case TimedOut:
		label = "timed out"
	case Failed:
		label = "failed"
	case Cancelled:
		return
	}
	label += ": " + r
	if _, ok := t.counts[label]; ok || len(t.counts) < maxReasonLabels {
		t.counts[label]++
	} else {
		t.other++
	}
}

// notes are the reasons, most frequent first.
func (t *reasonTally) notes() []string {
	type rc struct {
		label string
		n     int
	}
	list := make([]rc, 0, len(t.counts))
	for k, v := range t.counts {
		list = append(list, rc{k, v})
	}
	sort.Slice(list, func(i, j int) bool {
		if list[i].n != list[j].n {
			return list[i].n > list[j].n
		}
		return list[i].label < list[j].label
	})
	var out []string
	for i, r := range list {
		if i == 10 {
			out = append(out, fmt.Sprintf("… and %d other reasons", len(list)-10))
			break
		}
		out = append(out, fmt.Sprintf("%s (%d×)", r.label, r.n))
	}
	if t.other > 0 {
		out = append(out, fmt.Sprintf("… and %d events refused or failed with %d+ other distinct reasons (not told apart)", t.other, maxReasonLabels))
	}
	return out
}
