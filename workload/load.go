package workload

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	rtmetrics "runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/relaybench/relaybench/corpus"
	"github.com/relaybench/relaybench/internal/mono"
	"github.com/relaybench/relaybench/metrics"
	"github.com/relaybench/relaybench/nostr"
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

// DefaultLoadMaxEvents is the default cap on the distinct events one load
// phase may sign (-load-max-events): about 2.5 GB of 1 KB events in memory.
const DefaultLoadMaxEvents = 2_000_000

// LoadOptions configure Load.
type LoadOptions struct {
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
	Timeout     time.Duration // how long an EVENT may wait for its OK, a REQ for EOSE (default 10 s)
	// PublishParts:QueryParts is the mix of LoadMixed (default 4:1).
	PublishParts, QueryParts int
	Size                     int   // content bytes of each published event (default 1024)
	Seed                     int64 // content and filter choice
	MaxEvents                int   // refuse a pattern needing more distinct events (default DefaultLoadMaxEvents)
	Limit                    int   // limit of each query filter (default 100)
	// Source holds the events queries are drawn from: events the relay
	// holds (default: the corpus's, which the caller publishes first).
	Source []*nostr.Event
	Dial   wire.Options
	// Live receives a line per second while the load runs (t, intended/s,
	// sent/s, accepted/s, refused, dropped, in flight, p50, p99); nil: none.
	Live io.Writer
	// Begin, when set, starts sampling the relay's resources just before
	// the clock starts; the returned function ends it (relay CPU, RSS).
	Begin func() (end func() *results.Resources)
	// Signed is called once the events are signed, before the clock starts
	// (progress display).
	Signed func(n int, took time.Duration)
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
		errs = append(errs, fmt.Errorf("-load-kind: unknown kind %q (want publish, query or mixed)", o.Kind))
	}
	if o.Pattern == nil {
		errs = append(errs, errors.New("load: no pattern"))
	}
	if o.Pool < 0 {
		errs = append(errs, fmt.Errorf("-load-pool: must be positive, got %d", o.Pool))
	}
	if o.Pool == 0 {
		o.Pool = schedule.DefaultPool
	}
	if o.Connections < 0 {
		errs = append(errs, fmt.Errorf("-load-connections: must be positive, got %d", o.Connections))
	}
	if o.Connections == 0 {
		o.Connections = min(o.Pool, 8)
	}
	o.Connections = min(o.Connections, o.Pool)
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	if o.PublishParts < 0 || o.QueryParts < 0 {
		errs = append(errs, fmt.Errorf("-load-mix: parts must be ≥ 0, got %d:%d", o.PublishParts, o.QueryParts))
	}
	if o.PublishParts == 0 && o.QueryParts == 0 {
		o.PublishParts, o.QueryParts = 4, 1
	}
	if o.Size <= 0 {
		o.Size = 1024
	}
	if o.MaxEvents <= 0 {
		o.MaxEvents = DefaultLoadMaxEvents
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

// EventsNeeded is how many distinct events Load signs for o: one per
// publishing op of the pattern.
func (o LoadOptions) EventsNeeded() (int64, error) {
	if err := o.defaults(); err != nil {
		return 0, err
	}
	return o.publishes(schedule.Count(o.Pattern)), nil
}

// loadEvents are the pre-signed events of one load phase: ids and wire JSON
// only (the parsed events are dropped after signing to halve the memory).
type loadEvents struct {
	ids []string
	raw [][]byte
}

// signLoadEvents signs n fresh events (never seen by any relay: a run
// nonce is in their tags) with the corpus keys, before any clock starts.
func signLoadEvents(ctx context.Context, c *corpus.Corpus, n int, o *LoadOptions) (*loadEvents, error) {
	le := &loadEvents{}
	if n == 0 {
		return le, nil
	}
	f, err := NewFresh(ctx, c, FreshSpec{Count: n, Size: o.Size, Seed: o.Seed}, "")
	if err != nil {
		return nil, err
	}
	le.ids = make([]string, n)
	for i, e := range f.Events {
		le.ids[i] = e.ID
	}
	le.raw = f.Raw
	if o.Signed != nil {
		o.Signed(n, f.SignDuration)
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
// (send → reply) and the lateness (intended → send) beside it; ops that
// could not start within MaxLateness are counted as dropped, never lost.
// The phase says whether the client or the relay limited what was sent.
func Load(ctx context.Context, url string, c *corpus.Corpus, o LoadOptions) (results.Phase, error) {
	ph := results.Phase{Name: o.Name, Workload: "load"}
	if err := o.defaults(); err != nil {
		return ph, err
	}
	ph.Name = o.Name
	total := schedule.Count(o.Pattern)
	nPub := o.publishes(total)
	nQuery := total - nPub
	if nPub > int64(o.MaxEvents) {
		return ph, fmt.Errorf("-load-max-events: %s needs %d distinct events, above the cap of %d (events are never reused: relays would answer duplicate:); raise -load-max-events or lower the rate or duration",
			o.Pattern, nPub, o.MaxEvents)
	}
	if total == 0 {
		return ph, fmt.Errorf("-load-base: %s intends no operation", o.Pattern)
	}

	// Everything the ops need is built before the clock starts.
	var evs *loadEvents
	if nPub > 0 {
		var err error
		if evs, err = signLoadEvents(ctx, c, int(nPub), &o); err != nil {
			return ph, fmt.Errorf("signing load events: %w", err)
		}
	}
	var filters []nostr.Filter
	if nQuery > 0 {
		source := o.Source
		if len(source) == 0 && c != nil {
			source = c.Events
		}
		b, err := newShapeBuilder(source, o.Limit, o.Seed)
		if err != nil {
			return ph, err
		}
		want := int(min(nQuery, 4096))
		for i := 0; len(filters) < want && i < want*4; i++ {
			if f, ok := b.build(Shapes[i%len(Shapes)]); ok {
				filters = append(filters, f)
			}
		}
		if len(filters) == 0 {
			return ph, errors.New("load: no query filter can be built from the source events")
		}
	}
	dial := o.Dial
	dial.OKTimeout = o.Timeout
	conns, err := wire.DialPool(ctx, url, o.Connections, dial)
	if err != nil {
		return ph, err
	}
	pool := newConnPool(ctx, url, dial, conns)
	defer pool.close()

	live := newLiveStats(o.Pattern, o.MaxLateness)
	kinds := map[string]*kindStats{}
	if o.Kind == LoadMixed {
		kinds[LoadPublish] = newKindStats()
		kinds[LoadQuery] = newKindStats()
	}
	var (
		nextOp, nextEv, subSeq, returned, bytesSent atomic.Int64
		errNoEvent                                  = errors.New("no pre-signed event left (bug)")
	)
	cycle := int64(o.PublishParts + o.QueryParts)
	publish := func(ctx context.Context, cn *wire.Conn) schedule.Outcome {
		k := nextEv.Add(1) - 1
		if evs == nil || k >= int64(len(evs.raw)) {
			return schedule.Outcome{Err: errNoEvent}
		}
		ok, err := cn.Publish(ctx, evs.ids[k], evs.raw[k])
		bytesSent.Add(int64(len(evs.raw[k])))
		out := schedule.Outcome{Sent: ok.Sent, Done: ok.Recv}
		switch {
		case err != nil:
			out.Err = err
		case ok.Accepted:
			out.Accepted = true
		default:
			out.Refused = string(ok.Class)
		}
		return out
	}
	query := func(ctx context.Context, cn *wire.Conn) schedule.Outcome {
		n := subSeq.Add(1)
		f := filters[int(n-1)%len(filters)]
		qctx, cancel := context.WithTimeout(ctx, o.Timeout)
		res, err := cn.Query(qctx, "lq"+strconv.FormatInt(n, 36), []nostr.Filter{f})
		cancel()
		returned.Add(int64(len(res.Events)))
		out := schedule.Outcome{Sent: res.Sent, Done: res.End}
		switch {
		case err != nil:
			out.Err = err
		case res.Ended == wire.EndEOSE:
			out.Accepted = true
		default: // CLOSED
			out.Refused = string(res.Class)
			if out.Refused == "" {
				out.Refused = "closed"
			}
		}
		return out
	}
	op := func(ctx context.Context, intended int64, w int) schedule.Outcome {
		live.start(intended)
		cn := pool.get(w)
		kind := o.Kind
		if kind == LoadMixed {
			kind = LoadQuery
			if (nextOp.Add(1)-1)%cycle < int64(o.PublishParts) {
				kind = LoadPublish
			}
		}
		var out schedule.Outcome
		if kind == LoadPublish {
			out = publish(ctx, cn)
		} else {
			out = query(ctx, cn)
		}
		if out.Sent == 0 {
			out.Sent = mono.Now()
		}
		if out.Done == 0 {
			out.Done = mono.Now()
		}
		live.finish(intended, out)
		if ks := kinds[kind]; ks != nil {
			ks.record(w, intended, live.warmEnd(o.Warmup), out)
		}
		return out
	}

	var end func() *results.Resources
	if o.Begin != nil {
		end = o.Begin()
	}
	cpu0 := CPUTime()
	sched0 := schedLatencies()
	live.t0.Store(mono.Now() + 1<<62) // set by the first op: see liveStats.start
	stopLive := live.print(o.Live, o.Name)
	cfg := schedule.Config{Pattern: o.Pattern, Pool: o.Pool, MaxLateness: o.MaxLateness, Warmup: o.Warmup, Drain: o.Drain}
	var res *schedule.Result
	if o.Kind == LoadPublish {
		// Publishing is pipelined: an op writes its EVENT and returns; the
		// OK, matched by id on the connection's reader, completes it. No
		// goroutine waits per event, so the client's CPU goes to sending.
		var nextConn atomic.Int64
		res, err = schedule.RunAsync(ctx, cfg, func(_ context.Context, intended int64, _ int, done func(schedule.Outcome)) {
			live.start(intended)
			finish := func(out schedule.Outcome) {
				now := mono.Now()
				if out.Sent == 0 {
					out.Sent = now
				}
				if out.Done == 0 {
					out.Done = now
				}
				live.finish(intended, out)
				done(out)
			}
			k := nextEv.Add(1) - 1
			if evs == nil || k >= int64(len(evs.raw)) {
				finish(schedule.Outcome{Err: errNoEvent})
				return
			}
			cn := pool.get(int(nextConn.Add(1) - 1))
			bytesSent.Add(int64(len(evs.raw[k])))
			if err := cn.SendEvent(evs.ids[k], evs.raw[k], func(ok wire.OK) {
				out := schedule.Outcome{Sent: ok.Sent, Done: ok.Recv}
				switch {
				case ok.Err != nil:
					out.Err = ok.Err
				case ok.Accepted:
					out.Accepted = true
				default:
					out.Refused = string(ok.Class)
				}
				finish(out)
			}); err != nil {
				finish(schedule.Outcome{Err: err})
			}
		})
	} else {
		res, err = schedule.Run(ctx, cfg, op)
	}
	cpu := CPUTime() - cpu0
	schedP99 := schedLatencyP99(sched0, schedLatencies())
	stopLive()
	var relay *results.Resources
	if end != nil {
		relay = end()
	}
	if err != nil {
		return ph, err
	}

	ph = res.Phase(o.Name)
	ph.Params["kind"] = o.Kind
	ph.Params["connections"] = o.Connections
	ph.Params["timeout"] = o.Timeout.String()
	ph.Params["ops_planned"] = total
	if nPub > 0 {
		ph.Params["events_signed"] = nPub
		ph.Params["size"] = o.Size
		ph.Counts["bytes_sent"] = bytesSent.Load()
	}
	if o.Kind == LoadMixed {
		ph.Params["mix"] = fmt.Sprintf("%d:%d", o.PublishParts, o.QueryParts)
	}
	if nQuery > 0 {
		ph.Params["query_limit"] = o.Limit
		ph.Params["distinct_filters"] = len(filters)
		ph.Counts["events_returned"] = returned.Load()
	}
	all, redials, redialErrs := pool.stats()
	addConnStats(ctx, &ph, all)
	if redials > 0 || redialErrs > 0 {
		ph.Counts["reconnects"] = redials
		ph.Counts["reconnect_failures"] = redialErrs
		ph.Notes = append(ph.Notes, fmt.Sprintf("connections were lost during the load: %d redialed, %d redials failed; ops on a lost connection failed until it was back (see errors)", redials, redialErrs))
	}
	for _, name := range []string{LoadPublish, LoadQuery} {
		if ks := kinds[name]; ks != nil {
			ph.Groups = append(ph.Groups, ks.group(name, ph.Duration))
		}
	}
	ph.Resources = &results.Resources{ClientCPUSecs: cpu.Seconds()}
	if relay != nil {
		relay.ClientCPUSecs = ph.Resources.ClientCPUSecs
		ph.Resources = relay
	}
	if schedP99 > 0 {
		ph.Counts["client_sched_p99_ns"] = int64(schedP99)
	}
	judgeLoad(&ph, res, schedP99)
	return ph, ctx.Err()
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
func judgeLoad(ph *results.Phase, res *schedule.Result, schedP99 time.Duration) {
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
	// The pool was full because of the relay when its replies were slow
	// enough to fill it: at this rate, Pool ops take Pool/rate to arrive; a
	// p99 reply time of at least half that keeps every slot busy. A pool
	// that filled only for an instant while replies were fast was a client
	// stall (GC, CPU starvation) releasing a backlog of ops at once.
	poolFull, clientSlow := false, false
	if res.MaxInFlight >= int64(res.Pool) && secs > 0 && res.Uncorrected.Count() > 0 {
		rate := float64(res.Intended) / secs
		fill := float64(res.Pool) / rate * 1e9 // ns
		unc := float64(res.Uncorrected.Quantile(99))
		poolFull = unc >= fill/2
		// The client's own scheduling delays make up a good part of the
		// reply times: the pool filled because the client was slow to
		// read replies, not (only) because the relay was slow to send them.
		clientSlow = schedP99 > schedule.OnTime && float64(schedP99) >= unc/4
	}
	relayCPU := ""
	if ph.Resources.RelayCPUSecs > 0 && secs > 0 {
		relayCPU = fmt.Sprintf(", relay %.2f cores", ph.Resources.RelayCPUSecs/secs)
	}
	cpuNote := fmt.Sprintf("CPU: client %.2f of %.0f cores%s", client, cores, relayCPU)
	if schedP99 > 0 {
		cpuNote += fmt.Sprintf("; the client's runnable goroutines waited p99 %v for a CPU", roundLat(schedP99))
	}
	switch {
	case cpuSaturated:
		ph.ClientLimited = true
		ph.Notes = append(ph.Notes, "client-limited: the client's CPU was saturated ("+cpuNote+"): what was sent and the latencies are the client's limit, not the relay's")
	case (res.ClientLimited || dispatchLate) && poolFull && clientSlow:
		ph.ClientLimited = true
		ph.Notes = append(ph.Notes, fmt.Sprintf("client-limited: all %d in-flight slots filled, but the client's own goroutines waited p99 %v to run, a large part of the reply time p99 %v: the client was slow to send and read, so the relay cannot be blamed (%s)",
			res.Pool, roundLat(schedP99), roundLat(time.Duration(res.Uncorrected.Quantile(99))), cpuNote))
	case (res.ClientLimited || dispatchLate) && poolFull:
		// Late or dropped because every worker waited on the relay (the
		// dispatcher then waits for room in the queue in front of the pool).
		ph.ClientLimited = false
		ph.Notes = append(ph.Notes, fmt.Sprintf("relay-limited: ops were late or dropped because all %d in-flight slots (-load-pool) were waiting for the relay's replies while the client had CPU to spare (%s); the relay did not keep up with the offered rate at this concurrency",
			res.Pool, cpuNote))
	case dispatchLate:
		ph.ClientLimited = true
		ph.Notes = append(ph.Notes, fmt.Sprintf("client-limited: the dispatcher handed ops out late (dispatch lateness p99 %v > %v; %s)",
			time.Duration(res.DispatchLateness.Quantile(99)), schedule.OnTime, cpuNote))
	case res.ClientLimited && res.MaxInFlight >= int64(res.Pool):
		ph.Notes = append(ph.Notes, fmt.Sprintf("client-limited: %s; the pool filled only while a backlog of late ops went out at once (reply p99 %v is far below the %v the pool takes to fill at this rate): the client stalled (%s)",
			res.ClientLimitedWhy, roundLat(time.Duration(res.Uncorrected.Quantile(99))), roundLat(time.Duration(float64(res.Pool)/(float64(res.Intended)/secs)*1e9)), cpuNote))
	case res.ClientLimited:
		ph.Notes = append(ph.Notes, "client-limited: "+res.ClientLimitedWhy+" ("+cpuNote+")")
	default:
		ph.Notes = append(ph.Notes, "sent on schedule: the client kept up ("+cpuNote+")")
	}
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

// kindStats are one op kind's measurements in a mixed load, sharded by
// worker so that workers rarely share a lock.
type kindStats struct{ shards [8]kindShard }

type kindShard struct {
	mu                      sync.Mutex
	lat, unc                *metrics.Histogram
	accepted, refused, fail int64
}

func newKindStats() *kindStats {
	ks := &kindStats{}
	for i := range ks.shards {
		ks.shards[i].lat, ks.shards[i].unc = metrics.NewHistogram(), metrics.NewHistogram()
	}
	return ks
}

func (ks *kindStats) record(w int, intended, warmEnd int64, out schedule.Outcome) {
	s := &ks.shards[w%len(ks.shards)]
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case out.Err != nil:
		s.fail++
		return
	case out.Accepted:
		s.accepted++
	default:
		s.refused++
	}
	if intended >= warmEnd {
		s.lat.Record(out.Done - intended)
		s.unc.Record(out.Done - out.Sent)
	}
}

func (ks *kindStats) group(name string, dur int64) results.Group {
	lat, unc := metrics.NewHistogram(), metrics.NewHistogram()
	g := results.Group{Name: name, Counts: map[string]int64{}, Rates: map[string]float64{}}
	for i := range ks.shards {
		s := &ks.shards[i]
		s.mu.Lock()
		lat.Merge(s.lat)
		unc.Merge(s.unc)
		g.Counts["accepted"] += s.accepted
		g.Counts["refused"] += s.refused
		g.Counts["failed"] += s.fail
		s.mu.Unlock()
	}
	if dur > 0 {
		g.Rates["accepted_per_sec"] = float64(g.Counts["accepted"]) / (float64(dur) / 1e9)
	}
	g.Latency = map[string]*results.Histogram{"ok": lat.Result(), "ok_uncorrected": unc.Result()}
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
	off0     int64        // intended offset of the pattern's first op
	intended []int64      // per second, from the pattern
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
	l := &liveStats{intended: make([]int64, n), off0: -1}
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
	case out.Accepted:
		l.accepted[s].Add(1)
	default:
		l.refused[s].Add(1)
	}
	h := &l.hist[s%liveRing]
	h.mu.Lock()
	if h.sec == s {
		h.h.Record(out.Done - intended)
	}
	h.mu.Unlock()
}

// line formats second s and recycles its histogram for second s+liveRing.
func (l *liveStats) line(name string, s int) string {
	h := &l.hist[s%liveRing]
	h.mu.Lock()
	var p50, p99 time.Duration
	if h.sec == s && h.h.Count() > 0 {
		p50, p99 = time.Duration(h.h.Quantile(50)), time.Duration(h.h.Quantile(99))
	}
	h.h.Reset()
	h.sec = s + liveRing
	h.mu.Unlock()
	var intended int64
	if s < len(l.intended) {
		intended = l.intended[s]
	}
	dropped := max(0, intended-l.started[s].Load())
	return fmt.Sprintf("%s t=%3ds intended %7d/s sent %7d/s accepted %7d/s refused %5d failed %5d dropped %6d in-flight %5d p50 %9v p99 %9v",
		name, s, intended, l.sent[s].Load(), l.accepted[s].Load(), l.refused[s].Load(), l.failed[s].Load(), dropped,
		l.maxIn[s].Load(), roundLat(p50), roundLat(p99))
}

func roundLat(d time.Duration) time.Duration {
	switch {
	case d >= time.Second:
		return d.Round(time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond)
	default:
		return d.Round(time.Microsecond)
	}
}

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
			fmt.Fprintln(w, strings.TrimRight(l.line(name, next), " "))
		}
	}
}
