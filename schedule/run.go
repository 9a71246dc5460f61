package schedule

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/relaybench/relaybench/internal/mono"
	"github.com/relaybench/relaybench/metrics"
)

// Op performs one operation intended at mono time intended (ns) on the given
// worker (0 … Pool-1) and reports what happened. It must return when ctx is
// cancelled (the drain deadline). Sent and Done may be left 0: the worker
// then uses the time it started the op and the time the op returned.
type Op func(ctx context.Context, intended int64, worker int) Outcome

// Slot is one operation of the pattern: its position (0-based, in the
// pattern's order) and its intended mono time (ns).
type Slot struct {
	Seq      int64
	Intended int64
	// Queued is the mono time (ns) the dispatcher handed the op to the
	// queue, or began waiting for room in a full one: Queued − Intended is
	// the dispatcher's share of the op's lateness.
	Queued int64
}

// SlotOp is Op for callers that need the operation's position in the
// pattern (e.g. to choose its kind from a fixed mix).
type SlotOp func(ctx context.Context, s Slot, worker int) Outcome

// StartOp starts one operation intended at mono time intended and returns
// without waiting for its reply; it must call done exactly once, from any
// goroutine, with the outcome (Sent and Done may be left 0: then the start and
// callback times are used). When ctx is cancelled (the drain deadline) it
// must call done promptly, with an error. It is the op form for pipelined clients: no
// goroutine waits per operation, so the client spends its CPU on sending.
type StartOp func(ctx context.Context, intended int64, worker int, done func(Outcome))

// Outcome is the result of one operation.
type Outcome struct {
	Accepted bool   // the relay accepted it (OK true, EOSE, …)
	Refused  string // refusal class ("duplicate", "rate-limited", …); "" if none
	Err      error  // no answer: timeout, connection error, …
	Sent     int64  // mono ns when the op was actually written
	Done     int64  // mono ns when its reply arrived
}

// Defaults of Config.
const (
	DefaultPool        = 10 // the reference suite's --load-pool
	DefaultMaxLateness = time.Second
	DefaultDrain       = 10 * time.Second
	// DefaultMinSleep bounds the dispatcher's wake-ups to 20,000/s whatever
	// the rate (at 100,000/s about 5 ops go out per wake-up) at the price of
	// up to 50 µs of lateness, which is measured like any other.
	DefaultMinSleep = 50 * time.Microsecond
	// OnTime is the lateness p99 above which a run is reported as limited by
	// the client (operations not sent when intended).
	OnTime = time.Millisecond
)

// Config configures Run.
type Config struct {
	Pattern Pattern
	// Pool is the number of workers, hence the most operations in flight
	// (--load-pool). Default DefaultPool.
	Pool int
	// MaxLateness: an operation that cannot start within this of its
	// intended time is dropped and counted. Default DefaultMaxLateness.
	MaxLateness time.Duration
	// Warmup: operations intended in the first Warmup of the run are counted
	// but left out of the latency and lateness histograms.
	Warmup time.Duration
	// Drain bounds how long in-flight operations may take to finish once
	// dispatching stops (end of the pattern or ctx cancelled); then their
	// context is cancelled. Default DefaultDrain.
	Drain time.Duration
	// MinSleep is the dispatcher's shortest sleep: ops that come due
	// meanwhile go out together when it wakes. Lower means less lateness and
	// more CPU (each wake-up is a system call and two thread switches).
	// Default DefaultMinSleep.
	MinSleep time.Duration

	// Recorded, when set, is called once for every operation the Result
	// counts as finished (accepted, refused or failed), as it is counted;
	// Dropped once for every operation it counts as dropped. Operations
	// that finish after the Result was taken are not reported: they are
	// Unfinished. Both may be called from several goroutines at once.
	Recorded func(s Slot, out Outcome)
	Dropped  func(s Slot)

	// Owns, when set, keeps only the operations whose position in the
	// pattern (Slot.Seq, counted over the whole pattern) it returns true
	// for: an execution segment's share (operation k is segment k mod N's).
	// The others are skipped, neither sent nor counted; the kept ones keep
	// their intended times, so N instances with the N shares send the whole
	// pattern exactly. nil keeps every operation.
	Owns func(seq int64) bool

	// Times says what an operation's latency times (metrics.TimesOK,
	// TimesEOSE, …): the live view labels the run's series with it.
	Times string

	// coarse makes the dispatcher sleep on runtime timers only. Tests on a
	// fake clock (testing/synctest) need it: the precise sleep is a
	// nanosleep system call, which the fake clock does not see.
	coarse bool
}

func (c Config) withDefaults() (Config, error) {
	var errs []error
	if c.Pattern == nil {
		errs = append(errs, errors.New("schedule: no pattern"))
	}
	if c.Pool < 0 {
		errs = append(errs, fmt.Errorf("--load-pool: must be positive, got %d", c.Pool))
	}
	if c.MaxLateness < 0 {
		errs = append(errs, fmt.Errorf("--load-max-lateness: must be positive, got %v", c.MaxLateness))
	}
	if c.Warmup < 0 {
		errs = append(errs, fmt.Errorf("--load-warmup: must be ≥ 0, got %v", c.Warmup))
	}
	if c.MinSleep < 0 {
		errs = append(errs, fmt.Errorf("min sleep: must be ≥ 0, got %v", c.MinSleep))
	}
	if c.Drain < 0 {
		errs = append(errs, fmt.Errorf("drain: must be positive, got %v", c.Drain))
	}
	c.Pool = cmp.Or(c.Pool, DefaultPool)
	c.MaxLateness = cmp.Or(c.MaxLateness, DefaultMaxLateness)
	c.Drain = cmp.Or(c.Drain, DefaultDrain)
	c.MinSleep = cmp.Or(c.MinSleep, DefaultMinSleep)
	return c, errors.Join(errs...)
}

const (
	// coarseWait: runtime timers on Linux overshoot by up to ~1 ms (the
	// netpoller waits in whole milliseconds), so the dispatcher uses them only
	// until this close to the next intended time and nanosleeps the rest.
	coarseWait = 2 * time.Millisecond
	// maxShards bounds the per-shard histograms (3 × ~250 KB each) whatever
	// the pool size.
	maxShards = 8
	// maxErrKinds bounds the distinct error messages kept.
	maxErrKinds = 16
	// abandonWait is how long Run waits, after cancelling the ops' context at
	// the drain deadline, for ops to notice before it gives up on them.
	abandonWait = time.Second
)

// secCounts are the counters of a shard, over one second or the whole run.
type secCounts struct{ sent, accepted, refused, failed, dropped, inFlight int64 }

// add adds o's counters to c; in flight is the most of the two.
func (c *secCounts) add(o secCounts) {
	c.sent += o.sent
	c.accepted += o.accepted
	c.refused += o.refused
	c.failed += o.failed
	c.dropped += o.dropped
	c.inFlight = max(c.inFlight, o.inFlight)
}

// shard holds the measurements of a group of workers. Workers lock their
// shard once per op (uncontended unless two workers of the shard finish at
// once); shards are merged at the end.
type shard struct {
	mu                     sync.Mutex
	closed                 bool // the result was taken: record nothing more
	lat, unc, late, refLat *metrics.Histogram
	disp                   *metrics.Histogram // Queued − intended of the ops in late
	tot                    secCounts          // the whole run's (inFlight: the most at once)
	canceled               int64
	refusedBy, errs        map[string]int64
	secs                   []secCounts
}

func (s *shard) sec(start, t int64) *secCounts {
	i := 0
	if t > start {
		i = int((t - start) / 1e9)
	}
	for len(s.secs) <= i {
		s.secs = append(s.secs, secCounts{})
	}
	return &s.secs[i]
}

type runner struct {
	c       Config
	op      SlotOp
	startOp StartOp       // RunAsync: ops started without waiting
	slots   chan struct{} // RunAsync: one per operation in flight (Pool)
	ops     sync.WaitGroup

	start    int64 // mono ns of t = 0
	warmEnd  int64
	maxLate  int64
	queue    chan Slot
	shards   []*shard
	series   *metrics.Series
	inFlight atomic.Int64
	stopped  atomic.Bool // interrupted: queued ops are not started
	opCtx    context.Context
}

// dispatched is what the dispatcher counted.
type dispatched struct {
	intended, warmup int64
	droppedFull      int64
	canceled         int64
	interrupted      bool
	intendedSec      []int64
	droppedSec       []int64
}

func bump(v *[]int64, i int) {
	for len(*v) <= i {
		*v = append(*v, 0)
	}
	(*v)[i]++
}

// Run sends op at every intended time of c.Pattern from a pool of c.Pool
// workers and measures it. One dispatcher goroutine computes intended times
// and hands them to the workers through a queue without ever waiting for a
// reply; a worker that picks an op up more than MaxLateness after its
// intended time drops it (counted), and the dispatcher drops an op (counted)
// when the queue stays full until then. Cancelling ctx stops dispatching;
// operations in flight get c.Drain to finish. The Result holds what was
// measured until then; the error is for an invalid Config only.
func Run(ctx context.Context, c Config, op Op) (*Result, error) {
	if op == nil {
		return run(ctx, c, &runner{}, true)
	}
	return RunSlots(ctx, c, func(ctx context.Context, s Slot, w int) Outcome { return op(ctx, s.Intended, w) })
}

// RunSlots is Run for a SlotOp.
func RunSlots(ctx context.Context, c Config, op SlotOp) (*Result, error) {
	return run(ctx, c, &runner{op: op}, op == nil)
}

// RunAsync is Run for operations that are started and answered through a
// callback (StartOp). At most c.Pool operations are in flight; an operation
// that finds no free slot within MaxLateness of its intended time is dropped
// and counted. Two workers start operations, so the client's CPU goes to
// sending rather than to one waiting goroutine per operation.
func RunAsync(ctx context.Context, c Config, op StartOp) (*Result, error) {
	return run(ctx, c, &runner{startOp: op}, op == nil)
}

// asyncWorkers start RunAsync's operations.
const asyncWorkers = 2

func run(ctx context.Context, c Config, r *runner, noOp bool) (*Result, error) {
	c, err := c.withDefaults()
	if noOp {
		err = errors.Join(err, errors.New("schedule: no op"))
	}
	if err != nil {
		return nil, err
	}
	r.c, r.maxLate = c, int64(c.MaxLateness)
	workers := c.Pool
	if r.startOp != nil {
		r.slots = make(chan struct{}, c.Pool)
		workers = min(c.Pool, asyncWorkers)
	}
	r.queue = make(chan Slot, max(c.Pool, 1024))
	for range min(c.Pool, maxShards) {
		r.shards = append(r.shards, &shard{
			lat: metrics.NewHistogram(), unc: metrics.NewHistogram(), late: metrics.NewHistogram(), refLat: metrics.NewHistogram(),
			disp:      metrics.NewHistogram(),
			refusedBy: map[string]int64{}, errs: map[string]int64{},
		})
	}
	opCtx, cancelOps := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelOps()
	r.opCtx = opCtx

	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() { defer wg.Done(); r.work(w) }()
	}
	r.start = mono.Now()
	r.warmEnd = r.start + int64(c.Warmup)
	r.series = metrics.NewSeries(r.start).Times(c.Times)
	res := make(chan dispatched, 1)
	go func() { res <- r.dispatch(ctx) }() // starts after r's fields are set
	d := <-res

	finished := make(chan struct{})
	go func() { wg.Wait(); r.ops.Wait(); close(finished) }()
	drain := time.NewTimer(c.Drain)
	select {
	case <-finished:
		drain.Stop()
	case <-drain.C:
		cancelOps()
		abandon := time.NewTimer(abandonWait)
		select {
		case <-finished:
		case <-abandon.C:
		}
		abandon.Stop()
	}
	return r.result(d, mono.Now()), nil
}

// dispatch hands every intended time to the queue, on time.
func (r *runner) dispatch(ctx context.Context) (d dispatched) {
	defer close(r.queue)
	pc := NewPacer(r.c.Pattern)
	done := ctx.Done()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	interrupt := func() { d.interrupted = true; r.stopped.Store(true) }
	for seq := int64(0); ; seq++ {
		off, ok := pc.Next()
		if !ok {
			return d
		}
		if r.c.Owns != nil && !r.c.Owns(seq) {
			continue // another segment's operation
		}
		it := r.start + int64(off)
		if it > mono.Now() {
			if !r.waitUntil(done, timer, it) {
				interrupt()
				return d
			}
		} else {
			select {
			case <-done:
				interrupt()
				return d
			default:
			}
		}
		sec := int(off / time.Second)
		slot := Slot{Seq: seq, Intended: it, Queued: mono.Now()}
		d.intended++
		bump(&d.intendedSec, sec)
		if it < r.warmEnd {
			d.warmup++
		}
		select {
		case r.queue <- slot:
			continue
		default:
		}
		// The queue in front of the pool is full: wait for room, but only
		// until the op would be too late to start.
		wait := it + r.maxLate - mono.Now()
		if wait <= 0 {
			r.dropInDispatcher(&d, slot, sec)
			continue
		}
		timer.Reset(time.Duration(wait))
		select {
		case r.queue <- slot:
			timer.Stop()
		case <-timer.C:
			r.dropInDispatcher(&d, slot, sec)
		case <-done:
			timer.Stop()
			d.canceled++
			interrupt()
			return d
		}
	}
}

// dropInDispatcher counts an op the dispatcher dropped (the queue stayed
// full until it was too late to start).
func (r *runner) dropInDispatcher(d *dispatched, s Slot, sec int) {
	d.droppedFull++
	bump(&d.droppedSec, sec)
	if r.c.Dropped != nil {
		r.c.Dropped(s)
	}
}

// waitUntil sleeps until mono time target; false if done closed first.
// Ops that come due during a sleep of at least MinSleep go out in one batch.
func (r *runner) waitUntil(done <-chan struct{}, timer *time.Timer, target int64) bool {
	wait := coarseWait
	if r.c.coarse {
		wait = -1
	}
	return sleepTo(done, timer, target, wait, r.c.MinSleep)
}

// work runs ops from the queue until it is closed.
func (r *runner) work(w int) {
	sh := r.shards[w%len(r.shards)]
	for s := range r.queue {
		it := s.Intended
		now := mono.Now()
		if r.stopped.Load() || now-it > r.maxLate {
			sh.mu.Lock()
			if !sh.closed {
				if r.stopped.Load() {
					sh.canceled++
				} else {
					sh.tot.dropped++
					sh.sec(r.start, it).dropped++
					if r.c.Dropped != nil {
						r.c.Dropped(s)
					}
				}
			}
			sh.mu.Unlock()
			continue
		}
		if r.startOp != nil {
			r.start1(sh, w, s, now)
			continue
		}
		n := r.inFlight.Add(1)
		r.finish(sh, s, now, n, r.op(r.opCtx, s, w))
	}
}

// finish records the outcome of the op of slot s, started at started with
// n ops in flight (Sent defaults to started, Done to now), and counts it
// out of flight under the shard's lock, so result() sees op counts and
// in-flight agree.
func (r *runner) finish(sh *shard, s Slot, started, n int64, out Outcome) {
	if out.Sent == 0 {
		out.Sent = started
	}
	if out.Done == 0 {
		out.Done = mono.Now()
	}
	sh.mu.Lock()
	if !sh.closed {
		sh.record(r, s, started, n, out)
	}
	r.inFlight.Add(-1)
	sh.mu.Unlock()
}

// start1 starts one RunAsync operation once a slot is free, or drops it
// when none frees up within MaxLateness of its intended time.
func (r *runner) start1(sh *shard, w int, s Slot, now int64) {
	it := s.Intended
	select {
	case r.slots <- struct{}{}:
	default:
		wait := it + r.maxLate - mono.Now()
		if wait <= 0 {
			r.dropInWorker(sh, s)
			return
		}
		t := time.NewTimer(time.Duration(wait))
		select {
		case r.slots <- struct{}{}:
			t.Stop()
			now = mono.Now()
		case <-t.C:
			r.dropInWorker(sh, s)
			return
		}
	}
	n := r.inFlight.Add(1)
	r.ops.Add(1)
	started := now
	r.startOp(r.opCtx, it, w, func(out Outcome) {
		r.finish(sh, s, started, n, out)
		<-r.slots
		r.ops.Done()
	})
}

// dropInWorker counts an op dropped because no slot was free in time.
func (r *runner) dropInWorker(sh *shard, s Slot) {
	sh.mu.Lock()
	if !sh.closed {
		sh.tot.dropped++
		sh.sec(r.start, s.Intended).dropped++
		if r.c.Dropped != nil {
			r.c.Dropped(s)
		}
	}
	sh.mu.Unlock()
}

// record adds one finished op to the shard (locked).
func (s *shard) record(r *runner, slot Slot, started, inFlight int64, out Outcome) {
	it := slot.Intended
	if r.c.Recorded != nil {
		r.c.Recorded(slot, out)
	}
	s.tot.sent++
	s.sec(r.start, out.Sent).sent++
	if g := s.sec(r.start, started); inFlight > g.inFlight {
		g.inFlight = inFlight
	}
	s.tot.inFlight = max(s.tot.inFlight, inFlight)
	if it >= r.warmEnd {
		s.late.Record(out.Sent - it)
		// The same ops as late: the dispatcher's share never exceeds an
		// op's lateness (ops dropped before sending are in neither).
		s.disp.Record(min(slot.Queued, out.Sent) - it)
	}
	done := s.sec(r.start, out.Done)
	switch {
	case out.Err != nil:
		s.tot.failed++
		done.failed++
		msg := out.Err.Error()
		if _, ok := s.errs[msg]; !ok && len(s.errs) >= maxErrKinds {
			msg = "other errors"
		}
		s.errs[msg]++
		return // no reply: no latency
	case out.Accepted:
		s.tot.accepted++
		done.accepted++
	default:
		s.tot.refused++
		done.refused++
		class := out.Refused
		if class == "" {
			class = "other"
		}
		s.refusedBy[class]++
		if it >= r.warmEnd {
			s.refLat.Record(out.Done - it) // apart: a refusal is not a served op
		}
		return
	}
	r.series.Latency(out.Done, out.Done-it)
	if it >= r.warmEnd {
		s.lat.Record(out.Done - it)
		s.unc.Record(out.Done - out.Sent)
	}
}

// result closes the shards and merges them (in-flight ops that finish later
// are not recorded).
func (r *runner) result(d dispatched, end int64) *Result {
	for _, sh := range r.shards {
		sh.mu.Lock()
		sh.closed = true
	}
	res := &Result{
		Pattern: r.c.Pattern.String(), Pool: r.c.Pool, MaxLateness: r.c.MaxLateness, Warmup: r.c.Warmup, Drain: r.c.Drain, MinSleep: r.c.MinSleep,
		Intended: d.intended, WarmupOps: d.warmup, DroppedFull: d.droppedFull, Dropped: d.droppedFull,
		Canceled: d.canceled, Interrupted: d.interrupted,
		RefusedBy: map[string]int64{}, Errors: map[string]int64{},
		Latency: metrics.NewHistogram(), Uncorrected: metrics.NewHistogram(), Lateness: metrics.NewHistogram(),
		RefusedLatency: metrics.NewHistogram(), DispatchLateness: metrics.NewHistogram(),
		Series: r.series, Start: r.start, End: end,
	}
	inFlight := r.inFlight.Load()
	var tot secCounts
	var secs []secCounts
	for _, sh := range r.shards {
		tot.add(sh.tot)
		res.Canceled += sh.canceled
		for k, v := range sh.refusedBy {
			res.RefusedBy[k] += v
		}
		for k, v := range sh.errs {
			res.Errors[k] += v
		}
		res.Latency.Merge(sh.lat)
		res.RefusedLatency.Merge(sh.refLat)
		res.Uncorrected.Merge(sh.unc)
		res.Lateness.Merge(sh.late)
		res.DispatchLateness.Merge(sh.disp)
		for i, c := range sh.secs {
			for len(secs) <= i {
				secs = append(secs, secCounts{})
			}
			secs[i].add(c)
		}
	}
	for _, sh := range r.shards {
		sh.mu.Unlock()
	}
	res.Sent, res.Accepted, res.Refused, res.Failed = tot.sent, tot.accepted, tot.refused, tot.failed
	res.Dropped += tot.dropped
	res.MaxInFlight = tot.inFlight
	// Started but unfinished ops were sent; Unfinished also holds ops still
	// queued or being picked up when the drain ended (none after a normal end).
	res.Sent += inFlight
	res.Unfinished = res.Intended - res.Dropped - res.Canceled - res.Accepted - res.Refused - res.Failed

	at := func(i int) int64 { return r.start + int64(i)*1e9 }
	for i, n := range d.intendedSec {
		if n > 0 {
			res.Series.Add(at(i), "intended", n)
		}
	}
	for i, n := range d.droppedSec {
		if n > 0 {
			res.Series.Add(at(i), "dropped", n)
		}
	}
	for i, s := range secs {
		for _, kv := range []struct {
			name string
			n    int64
		}{{"sent", s.sent}, {"accepted", s.accepted}, {"refused", s.refused}, {"failed", s.failed}, {"dropped", s.dropped}} {
			if kv.n > 0 {
				res.Series.Add(at(i), kv.name, kv.n)
			}
		}
		if s.inFlight > 0 {
			res.Series.Gauge(at(i), "in_flight", s.inFlight)
		}
	}
	full := make([]int64, len(secs))
	for i, s := range secs {
		full[i] = s.inFlight
	}
	res.FullRate = rateWhenFull(r.c.Pattern, full, r.c.Pool)
	if d.interrupted {
		res.planned = Count(r.c.Pattern)
	}
	res.diagnose()
	return res
}

// gomaxprocs is reported in notes about client CPU limits.
func gomaxprocs() int { return runtime.GOMAXPROCS(0) }
