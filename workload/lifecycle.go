package workload

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/relaybench/relaybench/corpus"
	"github.com/relaybench/relaybench/flagcheck"
	"github.com/relaybench/relaybench/internal/mono"
	"github.com/relaybench/relaybench/internal/numfmt"
	"github.com/relaybench/relaybench/internal/progress"
	"github.com/relaybench/relaybench/metrics"
	"github.com/relaybench/relaybench/nostr"
	"github.com/relaybench/relaybench/outcome"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/verify"
	"github.com/relaybench/relaybench/wire"
)

// Lifecycle stages, in the order an event goes through them.
const (
	StageOK          = "ok"              // EVENT write → OK read
	StageDeliver     = "deliver"         // EVENT write → delivery on a live subscription
	StageReadOwn     = "read_your_write" // EVENT write → first answer to a REQ by id that holds the event
	StageReadAfterOK = "read_after_ok"   // OK read → that same answer
)

var lifeStages = []string{StageOK, StageDeliver, StageReadOwn, StageReadAfterOK}

// lifeStageWords is each stage as the notes say it (the results file
// keeps the keys), as the summary's group table titles them (report's
// groupTitles).
var lifeStageWords = map[string]string{StageOK: "OK", StageDeliver: "live delivery", StageReadOwn: "read your write", StageReadAfterOK: "read after OK"}

func init() {
	Declare[LifecycleOptions](Decl{Name: "lifecycle", Input: NeedsKeys, Adds: true,
		Summary: "Event lifecycle timing: send→OK, send→live delivery, send→readable by id, per event (reference: -timing)."})
}

// LifecycleOptions configure the event lifecycle timing (the reference
// suite's -timing, -timing-events, -timing-subs). Base's Timeout bounds the
// wait for an OK, for an EOSE and for a delivery.
type LifecycleOptions struct {
	Base   `set:"timeout=5s" set:"timeout_help=How long to wait for an OK and for the live delivery."`
	Events int `name:"timing-events" aliases:"events" param:"events" default:"100" help:"Events sampled, sent one at a time (reference: -timing-events; --events is the same flag)."`
	Size   int `default:"1024" help:"Content bytes of each event."`
	// ReadTimeout bounds the read-your-write retries after the OK: an
	// event not found by then is "never within" it.
	ReadTimeout time.Duration `name:"read-timeout" default:"2s" help:"How long after the OK a REQ by id is retried before the event counts as never readable."`
}

// Run times the lifecycle of fresh events signed by env's corpus keys.
func (o LifecycleOptions) Run(ctx context.Context, env Env) ([]results.Phase, error) {
	applyDefaults(&o)
	o.fromEnv(env, progress.Counting("Timing "+numfmt.Count(o.Events, "event"), "Timed", "event", "events", int64(o.Events)), int64(o.Events))
	return onePhase(Lifecycle(ctx, env.URL, env.Corpus, o))
}

// Lifecycle accounting. Every sampled EVENT ends in one outcome (OpEvent).
// Each accepted event adds one expected live delivery (OpDelivery) and one
// read-your-write probe (OpRead):
//   - a delivery is accepted when a valid copy arrives on the live
//     subscription; when none arrived within Timeout of the EVENT's write it
//     is timed out, and the event counts as missing in the verification
//     unless a valid copy came later, before the phase ended (late: the
//     relay was slow, not wrong);
//   - a read is accepted when a REQ by id answers the event, valid; a REQ
//     ending with EOSE but without it is retried with backoff until
//     ReadTimeout after the OK, and then the read is timed out (the event
//     was not readable within the read timeout) and counts as missing; a REQ
//     without EOSE within Timeout is timed out too, but its answer is
//     incomplete, so it is not counted missing.
//
// Invalid, non-matching and duplicated copies are counted in the
// verification and credited nowhere; a duplicate is never a missing one.

// lifeDeliveryStall is how many expected deliveries in a row may time out
// before the workload stops waiting for each one before the next EVENT
// (deliveries are then awaited all together at the end, for Timeout).
const lifeDeliveryStall = 3

// lifeReadStall is how many REQs in a row (the live subscription's and the
// reads') may end without EOSE before the phase stops.
const lifeReadStall = 3

// lifeRecord is one sampled event's stage times (mono ns; 0: not reached)
// and outcomes.
type lifeRecord struct {
	sent, ok, deliver, found int64
	event, delivery, read    outcome.Kind
	refused                  bool
	readMissing              bool
	reason                   string // why the EVENT was not accepted
	attempts                 int
}

// lifeRun is one run of the lifecycle workload.
type lifeRun struct {
	o      LifecycleOptions
	url    string
	user   context.Context // the user's ctx: cancelled only by Ctrl-C
	pctx   context.Context // the phase's ctx: also cancelled by the watchdog
	wd     *outcome.Watchdog
	fresh  *Fresh
	checks *verify.Checker
	series *metrics.Series

	events, deliveries, reads, subs *outcome.Ledger

	set  *connSet // 0 publishes, 1 holds the live subscription, 2 reads back
	errs []string

	mu        sync.Mutex // guards recs' deliver, dver, foreign and subDead
	recs      []lifeRecord
	delivered chan int
	dver      results.Verification // deliveries
	rver      results.Verification // read-backs
	repeats   int64                // read-back answers' repeats of their one event (see readAnswer)
	foreign   int64
	subDead   string // why the live subscription ended ("" while open)
	subLost   bool   // it ended with its connection
	subBook   func(outcome.Kind, string)

	readFails, dStalled int
	queries, sampled    int
	notes               []string
}

// Lifecycle sends fresh events one at a time and times, for each, the
// EVENT→OK round trip, the delivery to a live subscription held on another
// connection, and the first appearance in a REQ by id issued right after
// the OK (retried with bounded backoff). Every stage is a measured time on
// one monotonic clock, none is derived from another. Every delivered and
// read-back event goes through the verifier; only valid, first copies are
// credited.
func Lifecycle(ctx context.Context, url string, c *corpus.Corpus, o LifecycleOptions) (results.Phase, error) {
	applyDefaults(&o)
	nonce := RunNonce()
	ch := ChannelNames(o.Seed, nonce, 1)
	fresh, err := NewFresh(ctx, c, FreshSpec{Count: o.Events, Size: o.Size, Seed: o.Seed, Channels: ch}, nonce)
	if err != nil {
		return results.Phase{}, err
	}
	setup := mono.Now()
	set, err := dialSet(ctx, url, 3, o.Dial)
	if err != nil {
		return results.Phase{}, err
	}
	defer set.close()
	lr := newLifeRun(ctx, url, fresh, set, o)
	defer lr.wd.Stop()

	w := o.open(setup)
	lr.series = metrics.NewSeries(w.Start).Times(metrics.TimesOK)
	sub := lr.openSub(set.get(ctx, 1), ch, fresh.Events[0].CreatedAt)
	for i := 0; i < o.Events && lr.pctx.Err() == nil; i++ {
		if !lr.event(i) {
			break
		}
		o.progress(int64(i + 1))
	}
	lr.awaitDeliveries()
	w.Close(0)
	if sub != nil {
		sub.Close()
	}
	lr.settle()
	ph := lr.phase(w)
	set.report(ctx, &ph)
	w.Finish(&ph)
	return ph, ctx.Err()
}

func newLifeRun(ctx context.Context, url string, fresh *Fresh, set *connSet, o LifecycleOptions) *lifeRun {
	lr := &lifeRun{
		o: o, url: url, user: ctx, fresh: fresh, checks: verify.NewChecker(),
		events:     outcome.New(results.OpEvent, int64(o.Events)),
		deliveries: outcome.New(results.OpDelivery, 0),
		reads:      outcome.New(results.OpRead, 0),
		subs:       outcome.New(results.OpSub, 1),
		set:        set,
		recs:       make([]lifeRecord, o.Events),
		delivered:  make(chan int, o.Events),
	}
	lr.pctx, lr.wd = outcome.NewWatchdog(ctx, 3, "EVENTs without an OK (timed out or connection lost)")
	lr.dver.Verified, lr.rver.Verified = true, true
	return lr
}

// openSub opens the live subscription on cn and waits (at most Timeout) for
// its EOSE. Without EOSE the phase goes on: live deliveries may still come.
func (lr *lifeRun) openSub(cn *wire.Conn, ch []string, since int64) *wire.Sub {
	f := nostr.Filter{Tags: map[string][]string{"t": ch}, Since: nostr.Int64(since)}
	stream := lr.checks.NewStream(&f)
	eose := make(chan struct{})
	ended := make(chan struct{})
	var eoseOnce, endOnce, bookOnce sync.Once
	book := func(k outcome.Kind, detail string) { bookOnce.Do(func() { lr.subs.Add(k, detail) }) }
	lr.subBook = book
	end := func(why string, lost bool) {
		lr.mu.Lock()
		if lr.subDead == "" {
			lr.subDead, lr.subLost = why, lost
		}
		lr.mu.Unlock()
		endOnce.Do(func() { close(ended) })
	}
	sub, err := cn.Req("life", []nostr.Filter{f}, wire.SubHandler{
		OnEvent: func(raw []byte, recv int64) { lr.onDelivery(stream, raw, recv) },
		OnEOSE:  func(int64) { eoseOnce.Do(func() { close(eose) }) },
		OnClosed: func(reason string, class wire.Class, _ int64) {
			book(outcome.Refused, outcome.RefusalClass(class))
			end("the relay closed the live subscription: "+reason, false)
		},
		OnConnError: func(error) {
			if lr.user.Err() == nil {
				book(outcome.ConnLost, "")
			}
			end(outcome.WhyConnGone, true)
		},
	})
	if err != nil {
		if lr.user.Err() == nil {
			book(outcome.ConnLost, "")
		}
		end(outcome.WhyConnGone, true)
		return nil
	}
	tm := time.NewTimer(lr.o.Timeout)
	defer tm.Stop()
	select {
	case <-eose:
		book(outcome.Accepted, "")
	case <-ended:
	case <-tm.C:
		book(outcome.TimedOut, "")
		lr.noEOSE()
		lr.notes = append(lr.notes, fmt.Sprintf("the live subscription got no EOSE within %v; events were published anyway and their deliveries awaited", lr.o.Timeout))
	case <-lr.pctx.Done():
	}
	return sub
}

// onDelivery checks one event of the live subscription (on the reader
// goroutine): only a valid, matching first copy of an event relaybench
// published is credited.
func (lr *lifeRun) onDelivery(s *verify.Stream, raw []byte, recv int64) {
	var known *nostr.Event
	var pubRaw []byte
	if n, ok := lr.fresh.Index(raw); ok {
		known, pubRaw = lr.fresh.Events[n], lr.fresh.Raw[n]
	}
	e, fault := s.Event(raw, known, pubRaw)
	lr.mu.Lock()
	defer lr.mu.Unlock()
	verify.Book(&lr.dver, fault)
	if fault != verify.Valid {
		return
	}
	n, ours := lr.fresh.IndexOf(e.ID)
	if !ours {
		lr.foreign++
		return
	}
	lr.recs[n].deliver = recv
	select {
	case lr.delivered <- n:
	default:
	}
}

// noEOSE counts a REQ that ended without EOSE and stops the phase after
// lifeReadStall in a row.
func (lr *lifeRun) noEOSE() {
	lr.readFails++
	if lr.readFails >= lifeReadStall {
		lr.wd.Abort(fmt.Sprintf("%d REQs in a row got no EOSE within %v (timed out or connection lost)", lr.readFails, lr.o.Timeout))
	}
}

// conn returns the publishing (0) or read-back (1) connection, dialled
// again when the relay dropped it (connSet); nil when it is gone.
func (lr *lifeRun) conn(slot int) *wire.Conn {
	return lr.set.get(lr.pctx, 2*slot)
}

// event publishes event i and, when accepted, reads it back and awaits its
// delivery. It returns false when the publishing connection is gone.
func (lr *lifeRun) event(i int) bool {
	cn := lr.conn(0)
	if cn == nil {
		return false
	}
	octx, cancel := context.WithTimeout(lr.pctx, lr.o.Timeout)
	ok, err := cn.Publish(octx, lr.fresh.Events[i].ID, lr.fresh.Raw[i])
	cancel()
	k, _ := lr.events.Book(lr.user, ok, err)
	lr.wd.Book(k)
	lr.sampled++
	lr.mu.Lock()
	r := &lr.recs[i]
	r.sent, r.event, r.refused = ok.Sent, k, k == outcome.Refused
	if k == outcome.Accepted || k == outcome.Refused {
		r.ok = ok.Recv
	}
	switch k {
	case outcome.Refused:
		r.reason = "refused: " + ok.Reason
	case outcome.TimedOut:
		r.reason = fmt.Sprintf("no OK within %v", lr.o.Timeout)
	case outcome.ConnLost:
		r.reason = "connection lost before the OK"
	}
	lr.mu.Unlock()
	if k != outcome.Accepted {
		return true
	}
	lr.series.Add(ok.Recv, "accepted", 1)
	lr.series.Latency(ok.Recv, ok.Recv-ok.Sent)
	lr.deliveries.Request(1)
	lr.reads.Request(1)
	lr.read(i, ok.Recv)
	lr.awaitDelivery(i)
	return true
}

// read issues REQs by id for event i right after its OK, retried with
// backoff (1 ms doubling to 50 ms) until ReadTimeout after the OK, and books
// the read's one outcome.
func (lr *lifeRun) read(i int, okAt int64) {
	ev := lr.fresh.Events[i]
	deadline := okAt + int64(lr.o.ReadTimeout)
	backoff := time.Millisecond
	r := &lr.recs[i]
	for attempt := 1; lr.pctx.Err() == nil; attempt++ {
		cn := lr.conn(1)
		if cn == nil {
			lr.reads.Add(outcome.NotRun, outcome.WhyConnGone)
			r.read = outcome.NotRun
			return
		}
		qctx, cancel := context.WithTimeout(lr.pctx, lr.o.Timeout)
		qr, err := cn.Query(qctx, "rw-"+strconv.Itoa(i)+"-"+strconv.Itoa(attempt), []nostr.Filter{{IDs: []string{ev.ID}}})
		cancel()
		lr.queries++
		r.attempts = attempt
		if qr.Ended != wire.EndEOSE {
			lr.readUnanswered(r, qr, err)
			return
		}
		lr.readFails = 0
		if lr.readAnswer(i, qr) {
			lr.reads.Add(outcome.Accepted, "")
			r.read = outcome.Accepted
			return
		}
		if mono.Now()+int64(backoff) > deadline {
			lr.reads.Add(outcome.TimedOut, "")
			r.read, r.readMissing = outcome.TimedOut, true
			return
		}
		sleepCtx(lr.pctx, backoff)
		backoff = min(2*backoff, 50*time.Millisecond)
	}
}

// readUnanswered books a read whose REQ ended without EOSE: refused
// (CLOSED), or without an answer (not counted missing: the answer is
// incomplete).
func (lr *lifeRun) readUnanswered(r *lifeRecord, qr wire.QueryResult, err error) {
	if qr.Ended == wire.EndClosed {
		lr.readFails = 0
		lr.reads.Add(outcome.Refused, outcome.RefusalClass(qr.Class))
		r.read = outcome.Refused
		lr.errs = verify.AppendUnique(lr.errs, "read-back REQ closed: "+qr.Reason)
		return
	}
	if err == nil {
		err = wire.ErrClosed
	}
	if lr.pctx.Err() != nil && lr.user.Err() == nil {
		return // the phase stopped: settled as not run
	}
	r.read = lr.reads.BookErr(lr.user, err)
	if r.read == outcome.TimedOut || r.read == outcome.ConnLost {
		lr.noEOSE()
	}
}

// readAnswer verifies one complete answer to a REQ by event i's id and
// reports whether it holds the event, valid.
func (lr *lifeRun) readAnswer(i int, qr wire.QueryResult) bool {
	f := nostr.Filter{IDs: []string{lr.fresh.Events[i].ID}}
	s := lr.checks.NewStream(&f)
	found := false
	var repeats int64
	v := results.Verification{}
	for _, raw := range qr.Events {
		var known *nostr.Event
		var pubRaw []byte
		if n, ok := lr.fresh.Index(raw); ok {
			known, pubRaw = lr.fresh.Events[n], lr.fresh.Raw[n]
		}
		_, fault := s.Event(raw, known, pubRaw)
		if fault == verify.Duplicate {
			// The REQ went out right after the OK, while the relay may
			// still be broadcasting the event: its live feed and its
			// stored results can both carry it. NIP-01 does not forbid
			// that; the repeat is named, not credited and not failed.
			repeats++
			continue
		}
		verify.Book(&v, fault)
		found = found || fault == verify.Valid
	}
	v.Checked = 1
	verify.Add(&lr.rver, &v)
	// A relay that corrupts every copy would have each read retried to
	// its deadline: a run of wrong answers stops the phase instead.
	lr.wd.Answer(found, v.Invalid+v.NotMatching > 0)
	lr.repeats += repeats
	if found {
		lr.recs[i].found = qr.FirstEvent
	}
	return found
}

// awaitDelivery waits (at most Timeout from the EVENT's write) for event i's
// live delivery, so that the stages of two events never overlap. Once
// deliveries have stalled, or the subscription has ended, it leaves the
// delivery to awaitDeliveries.
func (lr *lifeRun) awaitDelivery(i int) {
	lr.mu.Lock()
	r := &lr.recs[i]
	got, dead, sent := r.deliver != 0, lr.subDead != "", r.sent
	lr.mu.Unlock()
	if !got && (dead || lr.dStalled >= lifeDeliveryStall) {
		return
	}
	if !got {
		got = lr.waitFor(func() bool { return r.deliver != 0 }, sent+int64(lr.o.Timeout))
	}
	switch {
	case got:
		lr.dStalled = 0
		lr.bookDelivery(i)
	case lr.pctx.Err() == nil && !lr.subGone():
		lr.dStalled++
		lr.bookDelivery(i)
	}
}

// awaitDeliveries waits for the deliveries still expected, until Timeout
// after the last EVENT's write, and books them.
func (lr *lifeRun) awaitDeliveries() {
	var last int64
	var open []int
	lr.mu.Lock()
	for i := range lr.recs {
		if r := lr.recs[i]; r.event == outcome.Accepted && r.delivery == outcome.None {
			open = append(open, i)
			last = max(last, r.sent)
		}
	}
	lr.mu.Unlock()
	if len(open) == 0 {
		return
	}
	lr.waitFor(func() bool {
		for _, i := range open {
			if lr.recs[i].deliver == 0 {
				return false
			}
		}
		return true
	}, last+int64(lr.o.Timeout))
	for _, i := range open {
		lr.bookDelivery(i)
	}
}

// waitFor waits until done (checked under lr.mu after each delivery) or
// mono time deadline, the subscription's end or the phase's end.
func (lr *lifeRun) waitFor(done func() bool, deadline int64) bool {
	tm := time.NewTimer(time.Duration(max(0, deadline-mono.Now())))
	defer tm.Stop()
	for {
		lr.mu.Lock()
		ok, dead := done(), lr.subDead != ""
		lr.mu.Unlock()
		if ok || dead {
			return ok
		}
		select {
		case <-lr.delivered:
		case <-tm.C:
			lr.mu.Lock()
			defer lr.mu.Unlock()
			return done()
		case <-lr.pctx.Done():
			return false
		}
	}
}

func (lr *lifeRun) subGone() bool {
	lr.mu.Lock()
	defer lr.mu.Unlock()
	return lr.subDead != ""
}

// bookDelivery books event i's expected delivery: accepted when a valid copy
// came; lost with the subscription's connection, not run when the relay
// closed it; otherwise timed out (missing). An interrupted or aborted wait
// is left open for settle.
func (lr *lifeRun) bookDelivery(i int) {
	lr.mu.Lock()
	defer lr.mu.Unlock()
	r := &lr.recs[i]
	k, why := outcome.TimedOut, ""
	switch {
	case r.deliver != 0:
		k = outcome.Accepted
	case lr.pctx.Err() != nil:
		return
	case lr.subDead != "" && lr.subLost:
		k = outcome.ConnLost
	case lr.subDead != "":
		k, why = outcome.NotRun, lr.subDead
	}
	r.delivery = k
	lr.deliveries.Add(k, why)
}

// settle gives every operation still open its end outcome.
func (lr *lifeRun) settle() {
	for _, l := range []*outcome.Ledger{lr.events, lr.deliveries, lr.reads, lr.subs} {
		lr.wd.Settle(l, outcome.WhyConnGone)
	}
	if lr.subBook != nil {
		lr.subBook(outcome.None, "") // the subscription's outcome is settled
	}
}

// sleepCtx sleeps d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) {
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
	case <-ctx.Done():
	}
}

// lifeTally is what the records add up to after the phase.
type lifeTally struct {
	hists                       map[string]*metrics.Histogram
	refusedOK                   *metrics.Histogram
	counts                      map[string]int64
	refusedDelivered, lateDeliv int64
	reasons                     []string
}

// tally builds the stage histograms (accepted events, valid first copies
// only) and the classic counters from the records.
func (lr *lifeRun) tally() lifeTally {
	t := lifeTally{hists: map[string]*metrics.Histogram{}, refusedOK: metrics.NewHistogram(), counts: map[string]int64{}}
	for _, s := range lifeStages {
		t.hists[s] = metrics.NewHistogram()
	}
	c := t.counts
	lr.mu.Lock()
	defer lr.mu.Unlock()
	for _, r := range lr.recs {
		if r.event == outcome.None || r.event == outcome.Cancelled || r.event == outcome.NotRun {
			continue
		}
		if r.event != outcome.Accepted {
			c["not_accepted"]++
			t.reasons = verify.AppendUnique(t.reasons, r.reason)
			if r.refused {
				t.refusedOK.Record(max(1, r.ok-r.sent))
				if r.deliver != 0 {
					t.refusedDelivered++
				}
			} else if r.deliver != 0 {
				c["delivered_unconfirmed"]++
			}
			continue
		}
		t.hists[StageOK].Record(max(1, r.ok-r.sent))
		switch r.delivery {
		case outcome.Accepted:
			t.hists[StageDeliver].Record(max(1, r.deliver-r.sent))
			c["delivered"]++
			if r.deliver < r.ok {
				c["delivered_before_ok"]++
			}
		case outcome.TimedOut:
			// Delivered after its deadline: timed out (the relay was
			// slow), not missing: the event did reach the subscription.
			if r.deliver != 0 {
				t.lateDeliv++
			} else {
				c["never_delivered"]++
			}
		}
		if r.read == outcome.Accepted {
			t.hists[StageReadOwn].Record(max(1, r.found-r.sent))
			t.hists[StageReadAfterOK].Record(max(1, r.found-r.ok))
			c["found"]++
			if r.attempts > 1 {
				c["found_after_retry"]++
			}
		}
		if r.readMissing {
			c["never_found"]++
		}
	}
	c["late_deliveries"] = t.lateDeliv
	return t
}

// verification is the phase's verification: the live deliveries and the
// read-backs, each with what was missing, invalid, not matching, duplicated
// or extra.
func (lr *lifeRun) verification(t lifeTally) (total, dv, rv *results.Verification) {
	lr.mu.Lock()
	d, r := lr.dver, lr.rver
	// The live subscription was checked when it was open (EOSE, or kept
	// waiting for deliveries) or anything came on it; refused or never
	// opened, it checked nothing.
	if lr.subs.Count(outcome.Accepted)+lr.subs.Count(outcome.TimedOut) > 0 || d.Invalid+d.NotMatching+d.Duplicated+d.Returned > 0 || lr.deliveries.Count(outcome.Accepted) > 0 {
		d.Checked = 1
	}
	d.Extra += lr.foreign + t.refusedDelivered
	lr.mu.Unlock()
	d.Expected, d.Missing = lr.deliveries.Requested(), t.counts["never_delivered"]
	r.Expected, r.Missing = lr.reads.Requested(), t.counts["never_found"]
	d.Notes = faultNotes("live deliveries", &d)
	r.Notes = faultNotes("read-back answers", &r)
	if d.Missing > 0 {
		d.Notes = append(d.Notes, fmt.Sprintf("%s never delivered (valid) to the live subscription within %v of %s EVENT", wereCount(d.Missing, "accepted event"), lr.o.Timeout, itsTheir(d.Missing)))
	}
	if r.Missing > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("%s (valid) in a REQ by id within %v of %s OK", numfmt.Count(r.Missing, "accepted event")+" never appeared", lr.o.ReadTimeout, itsTheir(r.Missing)))
	}
	if lr.repeats > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("%d read-back answers held their event twice (the REQ went out right after the OK, while the relay may still broadcast the event: live feed and stored results overlap; NIP-01 does not forbid it): counted once, not failed", lr.repeats))
	}
	if lr.foreign > 0 {
		d.Notes = append(d.Notes, fmt.Sprintf("%d events matching the live filter were delivered that relaybench did not publish", lr.foreign))
	}
	if t.refusedDelivered > 0 {
		d.Notes = append(d.Notes, fmt.Sprintf("%d events the relay refused were delivered anyway", t.refusedDelivered))
	}
	total = &results.Verification{}
	for _, v := range []*results.Verification{&d, &r} {
		verify.Finish(v)
		verify.Add(total, v)
	}
	verify.Finish(total)
	return total, &d, &r
}

// faultNotes explains the wrong events of v, none of which was credited.
func faultNotes(what string, v *results.Verification) []string {
	var notes []string
	if v.Invalid > 0 {
		notes = append(notes, fmt.Sprintf("%s: %d events failed the id or signature check (not credited)", what, v.Invalid))
	}
	if v.NotMatching > 0 {
		notes = append(notes, fmt.Sprintf("%s: %d events did not match the filter (not credited)", what, v.NotMatching))
	}
	if v.Duplicated > 0 {
		notes = append(notes, fmt.Sprintf("%s: %d copies of events already received (duplicates: the first copy was credited, none is missing)", what, v.Duplicated))
	}
	return notes
}

// phase builds the results phase.
func (lr *lifeRun) phase(w *Window) results.Phase {
	o := lr.o
	t := lr.tally()
	ph := w.Phase("lifecycle", "lifecycle")
	ph.Params = map[string]any{"events": o.Events, "size": o.Size, "timeout": o.Timeout.String(), "read_timeout": o.ReadTimeout.String(),
		"published": lr.sampled}
	ph.Size, ph.Counts, ph.Series, ph.Aborted = o.Size, t.counts, lr.series.Result(w.End), lr.wd.Aborted()
	bookAccount(&ph, lr.events.Result())
	ph.Accounts = append(ph.Accounts, lr.deliveries.Result(), lr.reads.Result(), lr.subs.Result())
	ph.Counts["sampled"], ph.Counts[results.CountSent] = int64(lr.sampled), int64(lr.sampled)
	ph.Counts[results.CountQueries] = int64(lr.queries)
	ph.Counts["foreign"] = lr.foreign
	var dv, rv *results.Verification
	ph.Verification, dv, rv = lr.verification(t)
	ph.Counts["duplicated"] = ph.Verification.Duplicated
	ph.Counts["invalid"] = ph.Verification.Invalid
	for _, s := range lifeStages {
		ph.Latency[s] = t.hists[s].Result()
		g := results.Group{Name: s, Counts: map[string]int64{"events": t.hists[s].Count()}, Latency: map[string]*results.Histogram{"latency": ph.Latency[s]}}
		switch s {
		case StageDeliver:
			g.Verification = dv
		case StageReadOwn:
			g.Verification = rv
		}
		ph.Groups = append(ph.Groups, g)
	}
	if t.refusedOK.Count() > 0 {
		ph.Latency["ok_refused"] = t.refusedOK.Result()
	}
	ph.Errors = verify.AppendUnique(ph.Errors, lr.errs...)
	ph.Notes = append(ph.Notes, lr.phaseNotes(t)...)
	return ph
}

// phaseNotes explains the phase: the slowest stage, how it was measured,
// and what did not go as asked.
func (lr *lifeRun) phaseNotes(t lifeTally) []string {
	var notes []string
	slowest, slowestP := "", int64(-1)
	for _, s := range []string{StageOK, StageDeliver, StageReadAfterOK} {
		if h := t.hists[s]; h.Count() > 0 && h.Quantile(50) > slowestP {
			slowest, slowestP = s, h.Quantile(50)
		}
	}
	if slowest != "" {
		notes = append(notes, fmt.Sprintf("slowest stage at p50: %s (p50 %s, p99 %s), of OK (EVENT write → OK read), live delivery (EVENT write → delivery on the live subscription) and read after OK (OK read → readable by id; read your write is the whole EVENT write → readable)", lifeStageWords[slowest],
			numfmt.Dur(time.Duration(t.hists[slowest].Quantile(50))), numfmt.Dur(time.Duration(t.hists[slowest].Quantile(99)))))
	}
	notes = append(notes,
		fmt.Sprintf("%s of %s content bytes sent one at a time on one connection; a live subscription on a second connection, REQs by id on a third", numfmt.Count(lr.sampled, "fresh event"), numfmt.Group(int64(lr.o.Size))),
		"every stage is timed on one monotonic clock from a stamp taken, never derived: the EVENT's send (just before its write) or, for read after OK, the OK's read; only accepted events and valid first copies are timed",
		fmt.Sprintf("read your write: REQ {ids:[id]} sent right after the OK, retried with backoff 1 ms doubling to 50 ms for up to %v", lr.o.ReadTimeout),
	)
	notes = append(notes, lr.notes...)
	if n := t.counts["found_after_retry"]; n > 0 {
		notes = append(notes, fmt.Sprintf("%s not yet readable right after %s OK (found on a retry)", wereCount(n, "accepted event"), itsTheir(n)))
	}
	if n := t.counts["delivered_before_ok"]; n > 0 {
		notes = append(notes, fmt.Sprintf("%d events reached the subscriber before their OK reached the publisher", n))
	}
	if lr.dStalled >= lifeDeliveryStall {
		notes = append(notes, fmt.Sprintf("%d expected deliveries in a row did not come: later deliveries were awaited together at the end (for %v) instead of one by one", lifeDeliveryStall, lr.o.Timeout))
	}
	if t.lateDeliv > 0 {
		notes = append(notes, fmt.Sprintf("%s after %s %v deadline: timed out (the relay was slow), not missing, and not in the delivery latency", numfmt.Count(t.lateDeliv, "delivery")+" arrived", itsTheir(t.lateDeliv), lr.o.Timeout))
	}
	for _, r := range t.reasons {
		notes = append(notes, "not accepted: "+r)
	}
	return notes
}

// Check checks the options as the CLI's flags set them (Checked).
func (o LifecycleOptions) Check(r *flagcheck.Ranges, _ CheckInput) {
	r.Min("timing-events", o.Events, 1)
	r.Size("size", o.Size)
	r.Positive("timeout", o.Timeout)
	r.Positive("read-timeout", o.ReadTimeout)
	r.Memory("timing-events", o.Events, float64(o.Events), flagcheck.FreshEventBytes(o.Size)+flagcheck.RecordBytes, "event")
}

// wereCount is "1 accepted event was" or "3 accepted events were".
func wereCount[T ~int | ~int64](n T, noun string) string {
	if n == 1 {
		return numfmt.Count(n, noun) + " was"
	}
	return numfmt.Count(n, noun) + " were"
}

// itsTheir is the possessive for n things: "its" for one, "their" else.
func itsTheir[T ~int | ~int64](n T) string {
	if n == 1 {
		return "its"
	}
	return "their"
}
