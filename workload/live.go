package workload

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/relaybench/relaybench/internal/mono"
	"github.com/relaybench/relaybench/internal/numfmt"
	"github.com/relaybench/relaybench/metrics"
	"github.com/relaybench/relaybench/outcome"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/schedule"
	"github.com/relaybench/relaybench/verify"
	"github.com/relaybench/relaybench/wire"
)

// The publishing engine shared by the live workloads (subscribe, burst,
// sweep, mixed): closed loop (wait or pipelined) or open loop at intended
// send times, every answer booked in one ledger.

// livePlan is what the publishing engine sends.
type livePlan struct {
	user     context.Context // the run's context: cancelled only by the user
	conns    []*wire.Conn
	fresh    *Fresh
	order    [][]int   // per connection: event numbers in send order
	intended [][]int64 // per connection: intended mono send time of each; nil: closed loop
	mode     string    // closed loop: ModeWait or ModePipeline
	window   int       // max unacknowledged EVENTs per connection (pipeline, open loop)
	timeout  time.Duration
	stopAt   int64 // mono time after which nothing more is sent (0: none)
	// behindWhy, when set, gives the open-loop events scheduled before
	// stopAt liveGrace more to be sent (late, and timed from their
	// intended time), and books those still unsent then as not run
	// (requested work that did not run), for the reason it gives for each
	// publisher: relayLimited when that publisher fell behind waiting on a
	// full in-flight window (senderLag); nil: they are cut at stopAt like
	// those scheduled after.
	behindWhy func(relayLimited bool) string
	grace     int64 // with behindWhy: the grace after stopAt, 0: liveGrace
	series    *metrics.Series
	// okLatencySeries puts OK latency in the series' per-second latency.
	okLatencySeries bool
	progress        func(done int64)
	// booked, when set, is told of each event whose outcome was booked
	// (on the goroutine that read its answer: it must not block).
	booked func(n int)
}

// liveOut is what the engine measured. Per-event slices are indexed by
// fresh event number; they may be read once run has returned (sentAt at any
// time).
type liveOut struct {
	sentAt   []atomic.Int64 // mono.Now() just before the EVENT was written; 0: not sent
	intended []int64        // intended send time (open loop), 0: closed loop
	okSent   []int64        // wire's send stamp
	okRecv   []int64        // when the OK (or its failure) was read
	outcomes []Outcome
	reasons  map[int]string
	led      *outcome.Ledger   // one outcome per event of the plan
	wd       *outcome.Watchdog // stops the engine when the relay makes no progress
	workers  []*pubWorker
	lags     []senderLag        // open loop: per publisher, why it fell behind
	late     *metrics.Histogram // open loop: actual − intended send time
	fromInt  *metrics.Histogram // open loop: OK read − intended send time
	lastOK   atomic.Int64
	done     atomic.Int64
	cut      atomic.Int64 // events not sent because stopAt passed
	behind   atomic.Int64 // of cut: scheduled before stopAt (with behindWhy)
}

func newLiveOut(n int) *liveOut {
	return &liveOut{
		sentAt: make([]atomic.Int64, n), intended: make([]int64, n), okSent: make([]int64, n), okRecv: make([]int64, n),
		outcomes: make([]Outcome, n), reasons: map[int]string{},
		late: metrics.NewHistogram(), fromInt: metrics.NewHistogram(),
	}
}

// runLive sends the plan and waits for every OK (bounded by the timeout).
func runLive(ctx context.Context, p *livePlan, out *liveOut) {
	user := p.user
	if user == nil {
		user = ctx
	}
	var planned int64
	for _, o := range p.order {
		planned += int64(len(o))
	}
	out.led = outcome.New(results.OpEvent, planned)
	ctx, out.wd = outcome.NewWatchdog(ctx, max(3, 2*len(p.conns)), "EVENTs without an OK (timed out or connection lost)")
	defer out.wd.Stop()
	defer func() {
		// Events a duration cut off were never part of the requested work;
		// those it was due to send before then (behindWhy) did not run.
		behind := out.behind.Load()
		out.led.Request(-(out.cut.Load() - behind))
		for _, l := range out.lags {
			if l.behind > 0 {
				out.led.AddN(outcome.NotRun, p.behindWhy(l.relayLimited()), l.behind)
			}
		}
		out.wd.Settle(out.led, outcome.WhyConnGone)
	}()
	var reasonsMu sync.Mutex
	var wg sync.WaitGroup
	out.workers = make([]*pubWorker, len(p.conns))
	out.lags = make([]senderLag, len(p.conns))
	var lateMu sync.Mutex
	for w, cn := range p.conns {
		pw := newPubWorker()
		out.workers[w] = pw
		var mu sync.Mutex // guards pw: OK callbacks run on the reader goroutine
		book := liveBooker(user, p, out, pw, &mu, &reasonsMu, &lateMu)
		wg.Add(1)
		go func() {
			defer wg.Done()
			var intended []int64
			if p.intended != nil {
				intended = p.intended[w]
			}
			if intended == nil && p.mode == ModeWait {
				liveWait(ctx, cn, p, out, p.order[w], book, pw, &mu)
				return
			}
			liveAsync(ctx, cn, p, out, p.order[w], intended, book, pw, &out.lags[w], &mu, &lateMu)
		}()
	}
	wg.Wait()
	if p.progress != nil {
		p.progress(out.done.Load())
	}
}

// liveBooker returns the booking of one publisher's events (pw, guarded
// by mu): it records each event's OK (or its failure) and outcome into
// out, credits it, and reports progress. It runs on the connection's reader
// goroutine and must not block.
func liveBooker(user context.Context, p *livePlan, out *liveOut, pw *pubWorker, mu, reasonsMu, lateMu *sync.Mutex) func(int, wire.OK, error) {
	return func(n int, ok wire.OK, err error) {
		now := mono.Now()
		mu.Lock()
		out.okSent[n], out.okRecv[n] = ok.Sent, ok.Recv
		if out.okRecv[n] == 0 {
			out.okRecv[n] = now
		}
		oc, reason := bookOK(user, out, ok, err, pw, p.series, p.okLatencySeries, now)
		out.outcomes[n] = oc
		if out.intended[n] > 0 && oc == Accepted {
			lateMu.Lock()
			out.fromInt.Record(ok.Recv - out.intended[n])
			lateMu.Unlock()
		}
		mu.Unlock()
		if reason != "" {
			reasonsMu.Lock()
			out.reasons[n] = reason
			reasonsMu.Unlock()
		}
		for {
			last := out.lastOK.Load()
			if now <= last || out.lastOK.CompareAndSwap(last, now) {
				break
			}
		}
		if p.booked != nil {
			p.booked(n)
		}
		d := out.done.Add(1)
		if p.progress != nil && d%256 == 0 {
			p.progress(d)
		}
	}
}

func liveWait(ctx context.Context, cn *wire.Conn, p *livePlan, out *liveOut, order []int,
	book func(int, wire.OK, error), pw *pubWorker, mu *sync.Mutex) {
	for k, n := range order {
		if ctx.Err() != nil || cn.Err() != nil {
			return
		}
		if p.stopAt > 0 && mono.Now() >= p.stopAt {
			out.cut.Add(int64(len(order) - k))
			return
		}
		raw := p.fresh.Raw[n]
		octx, cancel := context.WithTimeout(ctx, p.timeout)
		out.sentAt[n].Store(mono.Now())
		ok, err := cn.Publish(octx, p.fresh.Events[n].ID, raw)
		cancel()
		mu.Lock()
		pw.sent++
		pw.bytes += int64(len(raw))
		mu.Unlock()
		book(n, ok, err)
		if err != nil && cn.Err() != nil {
			mu.Lock()
			pw.errs = append(pw.errs, "connection lost: "+cn.Err().Error())
			mu.Unlock()
			return
		}
	}
}

func liveAsync(ctx context.Context, cn *wire.Conn, p *livePlan, out *liveOut, order []int, intended []int64,
	book func(int, wire.OK, error), pw *pubWorker, lag *senderLag, mu, lateMu *sync.Mutex) {
	slots := make(chan struct{}, p.window)
	var inflight sync.WaitGroup
	pace(ctx, len(order), intended, func(k int) bool {
		n := order[k]
		if intended != nil {
			out.intended[n] = intended[k]
		}
		if ctx.Err() != nil || cn.Err() != nil {
			return false
		}
		now := mono.Now()
		if intended != nil {
			lag.attempt(now, intended[k])
		}
		sendBy := p.sendBy(intended, k)
		if sendBy > 0 && now >= sendBy {
			cutFrom(p, out, lag, intended, len(order), k, len(slots), now)
			return false
		}
		took, full := takeSlot(ctx, cn, slots, sendBy)
		if full > 0 && intended != nil {
			lag.waited(intended[k], full)
		}
		if ctx.Err() != nil || cn.Err() != nil {
			return false
		}
		now = mono.Now()
		if took && sendBy > 0 && now >= sendBy { // a slot freed as the duration ended: too late
			<-slots
			took = false
		}
		if !took { // the duration ended while the window was full
			cutFrom(p, out, lag, intended, len(order), k, len(slots), until(now, sendBy))
			return false
		}
		out.sentAt[n].Store(now)
		if intended != nil {
			lateMu.Lock()
			out.late.Record(max(1, now-intended[k]))
			lateMu.Unlock()
		}
		err := sendWindowed(cn, p.fresh.Events[n].ID, p.fresh.Raw[n], slots, &inflight, mu, pw, func(ok wire.OK, err error) { book(n, ok, err) })
		if d := until(mono.Now(), sendBy) - now; intended != nil && d > int64(schedule.OnTime) {
			lag.blocked(intended[k], d) // the write waited: the relay did not read (TCP back-pressure)
		}
		if err != nil {
			return cn.Err() == nil
		}
		return true
	})
	if cn.Err() != nil {
		mu.Lock()
		pw.errs = verify.AppendUnique(pw.errs, "connection lost: "+cn.Err().Error())
		mu.Unlock()
	}
	awaitOKs(ctx, cn, &inflight, p.timeout, func(s string) {
		mu.Lock()
		pw.errs = append(pw.errs, s)
		mu.Unlock()
	})
}

// takeSlot takes a slot of the in-flight window slots, waiting while the
// window is full until a slot frees (an OK came), ctx or cn ends, or stopAt
// (mono time; 0: none) passes. It says whether it took one, and how long it
// waited for a full window (until stopAt at most).
func takeSlot(ctx context.Context, cn *wire.Conn, slots chan struct{}, stopAt int64) (took bool, full int64) {
	select {
	case slots <- struct{}{}:
		return true, 0
	default:
	}
	t0 := mono.Now()
	var stop <-chan time.Time
	if stopAt > 0 {
		tm := time.NewTimer(time.Duration(stopAt - t0))
		defer tm.Stop()
		stop = tm.C
	}
	select {
	case slots <- struct{}{}:
		took = true
	case <-ctx.Done():
	case <-cn.Done():
	case <-stop:
	}
	return took, max(1, until(mono.Now(), stopAt)-t0)
}

// until is now, or stopAt (0: none) when that came first: a wait is
// evidence up to the end of the duration only.
func until(now, stopAt int64) int64 {
	if stopAt > 0 {
		return min(now, stopAt)
	}
	return now
}

// liveGrace is how long after stopAt an open-loop event scheduled before
// it may still be sent when the plan books the unsent as not run
// (behindWhy): a publisher a few milliseconds behind at the end sends its
// last events late (their latency counts from their intended time) rather
// than leaving them unrun; the bound is the one an open-loop load drops
// an operation at (schedule.DefaultMaxLateness).
const liveGrace = int64(schedule.DefaultMaxLateness)

// sendBy is the mono time after which the event at k of a publisher's
// order (intended: its intended times, nil in closed loop) is no longer
// sent: stopAt, or liveGrace after it for an event scheduled before it when
// unsent ones are booked (behindWhy); 0: no limit.
func (p *livePlan) sendBy(intended []int64, k int) int64 {
	if p.stopAt > 0 && p.behindWhy != nil && intended != nil && intended[k] < p.stopAt {
		return p.stopAt + cmp.Or(p.grace, liveGrace)
	}
	return p.stopAt
}

// cutFrom books the events of order from k on as cut, at mono time at (a
// send-by time passed): those due before stopAt, with behindWhy, as
// behind, with the publisher's lag evidence (lag) and its window's fill
// (inFlight) then.
func cutFrom(p *livePlan, out *liveOut, lag *senderLag, intended []int64, n, k, inFlight int, at int64) {
	out.cut.Add(int64(n - k))
	if p.behindWhy == nil || intended == nil {
		return
	}
	if b := int64(scheduledBefore(intended[k:], p.stopAt)); b > 0 {
		out.behind.Add(b)
		lag.cut(at, intended[k], b, inFlight)
	}
}

// senderLag is one open-loop publisher's evidence of why it fell behind
// its schedule, kept by its sender goroutine: since when it was late, and
// how much of that time it waited on the relay, for a slot of its full
// in-flight window (the relay's OKs) or in a write the relay did not read
// (TCP back-pressure: the connection's write queue full), rather than on
// itself (timer wake-ups, its CPU, scheduling).
type senderLag struct {
	since     int64 // intended time of the first event it was late for since it last kept time; 0: on time
	fullWait  int64 // ns waited for a slot of a full window since then
	writeWait int64 // ns spent in writes that took over schedule.OnTime since then
	lag       int64 // at the cut: how long it had been behind (stopAt − since)
	behind    int64 // events due before stopAt left unsent
	inFlight  int   // EVENTs awaiting their OK at the cut
}

// attempt notes that the publisher came to send the event intended at t
// at now: on time (within schedule.OnTime) it has caught up.
func (l *senderLag) attempt(now, t int64) {
	switch {
	case now-t <= int64(schedule.OnTime):
		l.since, l.fullWait, l.writeWait = 0, 0, 0
	case l.since == 0:
		l.since = t
	}
}

// waited notes that the event intended at t waited d ns for a slot of the
// full window.
func (l *senderLag) waited(t, d int64) {
	if l.since == 0 {
		l.since = t
	}
	l.fullWait += d
}

// blocked notes that the write of the event intended at t took d ns, over
// schedule.OnTime: the connection's write queue was full because the relay
// was not reading (a write alone takes microseconds).
func (l *senderLag) blocked(t, d int64) {
	if l.since == 0 {
		l.since = t
	}
	l.writeWait += d
}

// cut notes that at (mono time) the publisher stopped with behind events
// due before the duration's end unsent, the first of them intended at t,
// and inFlight EVENTs awaiting their OK.
func (l *senderLag) cut(at, t, behind int64, inFlight int) {
	if l.since == 0 {
		l.since = t
	}
	l.lag, l.behind, l.inFlight = max(1, at-l.since), behind, inFlight
}

// relayLimited says whether the publisher fell behind because of the
// relay: it spent at least half the time it was behind waiting on it, for
// a slot of its full in-flight window (the relay's OKs) or in writes the
// relay did not read. Otherwise the client sent late with room in the
// window: its timer wake-ups, CPU or scheduling.
func (l *senderLag) relayLimited() bool { return 2*(l.fullWait+l.writeWait) >= l.lag }

// scheduledBefore is how many of the intended send times (ascending) come
// before t.
func scheduledBefore(intended []int64, t int64) int {
	n, _ := slices.BinarySearch(intended, t)
	return n
}

// sendWindowed sends event id (raw) on cn, its window slot already taken
// (slots): book gets its OK, or the send's error, once; the slot is then
// released. The send counts in pw (mu guards it). It returns the send's
// error.
func sendWindowed(cn *wire.Conn, id string, raw []byte, slots chan struct{}, inflight *sync.WaitGroup, mu *sync.Mutex, pw *pubWorker, book func(wire.OK, error)) error {
	inflight.Add(1)
	release := func() { <-slots; inflight.Done() }
	err := cn.SendEvent(id, raw, func(ok wire.OK) { book(ok, ok.Err); release() })
	mu.Lock()
	pw.sent++
	pw.bytes += int64(len(raw))
	mu.Unlock()
	if err != nil {
		book(wire.OK{ID: id, Err: err}, err)
		release()
	}
	return err
}

// pace is the open-loop sender every live workload sends through: it
// calls send(k) for k = 0…n-1 in order, each at its intended mono time
// times[k] from the schedule package's pacer (at once when times is nil:
// closed loop), sleeping in between without busy-waiting
// (schedule.SleepUntil), until send returns false. ctx ending cuts a sleep
// short; send sees it and stops.
func pace(ctx context.Context, n int, times []int64, send func(k int) bool) {
	for k := range n {
		if times != nil {
			schedule.SleepUntil(ctx, times[k])
		}
		if !send(k) {
			return
		}
	}
}

// bookOK books one OK (or its failure) in the ledger and pw, and returns
// the outcome and the reason to keep.
func bookOK(user context.Context, out *liveOut, ok wire.OK, err error, pw *pubWorker, series *metrics.Series, latSeries bool, now int64) (Outcome, string) {
	k, _ := out.led.Book(user, ok, err)
	out.wd.BookErr(k, err)
	return credit(k, ok, pw, series, latSeries, now)
}

// publishSummary fills the publishing side of a phase: counts, refusals,
// OK latency and, open loop, lateness and latency from the intended time.
func publishSummary(ph *results.Phase, out *liveOut, events int) *metrics.Histogram {
	hist, refHist := mergePublishers(ph, out.workers, events)
	bookAccount(ph, out.led.Result())
	if ph.Aborted == "" {
		ph.Aborted = out.wd.Aborted()
	}
	ph.Latency[results.LatencyOK] = hist.Result()
	if refHist.Count() > 0 {
		ph.Latency["ok_refused"] = refHist.Result()
	}
	if out.late.Count() > 0 {
		ph.Latency["send_lateness"] = out.late.Result()
		ph.Latency["ok_from_intended"] = out.fromInt.Result()
		if p99 := out.late.Quantile(99); p99 > int64(time.Millisecond) {
			ph.Notes = append(ph.Notes, lateNote(p99, out.fromInt, hist))
		}
	}
	ph.Notes = append(ph.Notes, reasonSamples(out.reasons, out.outcomes)...)
	return hist
}

// lateNote says that open-loop events went out late (p99 behind the
// schedule) and gives the OK latency both ways: from the intended send
// time, which counts that lateness (fromInt), and from the actual send
// (hist), the one the summaries lead with.
func lateNote(p99 int64, fromInt, hist *metrics.Histogram) string {
	q := func(h *metrics.Histogram) string {
		return fmt.Sprintf("p50 %v, p99 %v", numfmt.Dur(time.Duration(h.Quantile(50))), numfmt.Dur(time.Duration(h.Quantile(99))))
	}
	s := fmt.Sprintf("events went out late: p99 %v behind the schedule (client timer wake-ups, a full in-flight window, or the relay not reading fast enough: TCP back-pressure)", numfmt.Dur(time.Duration(p99)))
	if fromInt.Count() == 0 || hist.Count() == 0 {
		return s
	}
	return s + fmt.Sprintf("; OK latency timed from the intended send time, this lateness included: %s (from the actual send: %s)", q(fromInt), q(hist))
}
