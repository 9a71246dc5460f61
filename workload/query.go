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
	Queries     int           // total queries (-queries)
	Limit       int           // limit of each filter (-query-limit)
	Connections int           // concurrent query connections (default 1: latency without self-contention)
	Timeout     time.Duration // how long a REQ may wait for EOSE
	Seed        int64         // drives the choice of filter values
	// RelayCap is the relay's per-REQ cap announced in NIP-11
	// limitation.max_limit (0: not announced; it is then inferred).
	RelayCap int
	Dial     wire.Options
	Progress func(done int64)
}

// maxRedials is how often a query connection is dialled again after the
// relay dropped it, before its remaining queries are left not run.
const maxRedials = 3

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
}

// queryRecord is one executed query, kept for verification after the timed
// window (parsing and signature checks are never timed).
type queryRecord struct {
	shape   string
	filter  nostr.Filter
	raws    [][]byte
	latency int64 // REQ write → EOSE
	first   int64 // REQ write → first EVENT (0 if none)
	ended   string
	err     string
}

// Query runs the query phase. model is what the relay should hold (nil when
// relaybench did not publish in this run: results are then checked only for
// validity and filter match). source gives the events filters are drawn from.
func Query(ctx context.Context, url string, model *verify.Model, source []*nostr.Event, o QueryOptions) (results.Phase, error) {
	o.defaults()
	var ph results.Phase
	b, err := newShapeBuilder(source, o.Limit, o.Seed)
	if err != nil {
		return ph, err
	}
	// Build every filter before the clock starts.
	recs := make([]*queryRecord, 0, o.Queries)
	for i := 0; len(recs) < o.Queries && i < o.Queries*4; i++ {
		shape := Shapes[i%len(Shapes)]
		f, ok := b.build(shape)
		if !ok {
			continue
		}
		recs = append(recs, &queryRecord{shape: shape, filter: f})
	}
	conns, err := wire.DialPool(ctx, url, o.Connections, o.Dial)
	if err != nil {
		return ph, err
	}
	defer func() { closeAll(conns) }()

	led := outcome.New(results.OpQuery, int64(o.Queries))
	led.AddN(outcome.NotRun, "no filter could be drawn from the events", int64(o.Queries-len(recs)))
	pctx, wd := outcome.NewWatchdog(ctx, 3, "queries ended without EOSE (timed out or connection lost)")
	defer wd.Stop()
	var next, done atomic.Int64
	var wg sync.WaitGroup
	var errMu sync.Mutex
	var connErrs []string
	cpu0 := CPUTime()
	start := mono.Now()
	series := metrics.NewSeries(start)
	for w := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			redials := 0
			for n := 0; pctx.Err() == nil; n++ {
				cn := conns[w]
				if cn.Err() != nil {
					// Redial a lost connection a few times; the queries it
					// cannot run are settled as not run (connection gone).
					if redials == maxRedials {
						return
					}
					redials++
					nc, err := wire.Dial(pctx, url, o.Dial)
					if err != nil {
						errMu.Lock()
						connErrs = verify.AppendUnique(connErrs, "redial after a lost connection failed: "+err.Error())
						errMu.Unlock()
						return
					}
					errMu.Lock()
					conns[w] = nc
					errMu.Unlock()
					cn = nc
				}
				k := next.Add(1) - 1
				if k >= int64(len(recs)) {
					return
				}
				r := recs[k]
				qctx, cancel := context.WithTimeout(pctx, o.Timeout)
				qr, err := cn.Query(qctx, "q"+strconv.Itoa(w)+"-"+strconv.Itoa(n), []nostr.Filter{r.filter})
				cancel()
				now := mono.Now()
				r.raws = qr.Events
				if qr.FirstEvent > 0 {
					r.first = qr.FirstEvent - qr.Sent
				}
				var kind outcome.Kind
				switch qr.Ended {
				case wire.EndEOSE:
					kind = outcome.Accepted
					led.Add(kind, "")
					r.latency = qr.End - qr.Sent
					r.ended = "eose"
					series.Add(now, "queries", 1)
					series.Latency(now, r.latency)
				case wire.EndClosed:
					kind = outcome.Refused
					led.Add(kind, outcome.RefusalClass(qr.Class))
					r.ended = "closed"
					r.err = "CLOSED: " + qr.Reason
					series.Add(now, "failed", 1)
				default:
					if err == nil {
						err = qr.Err
					}
					if err == nil {
						err = wire.ErrClosed
					}
					kind = led.BookErr(ctx, err)
					r.ended = string(qr.Ended)
					switch kind {
					case outcome.TimedOut:
						r.ended = string(wire.EndTimeout)
						r.err = fmt.Sprintf("no EOSE within %v", o.Timeout)
						series.Add(now, "failed", 1)
					case outcome.ConnLost:
						r.err = "connection lost before EOSE: " + err.Error()
						series.Add(now, "failed", 1)
					default: // cancelled by the user, or the phase stopped: not run
						r.ended, r.err = "", ""
						r.raws = nil
					}
				}
				wd.Book(kind)
				if d := done.Add(1); o.Progress != nil && d%10 == 0 {
					o.Progress(d)
				}
			}
		}()
	}
	wg.Wait()
	end := mono.Now()
	cpu := CPUTime() - cpu0
	if o.Progress != nil {
		o.Progress(done.Load())
	}
	wd.Settle(led, outcome.WhyConnGone)

	ph = results.Phase{
		Name:     "query",
		Workload: "query",
		Params: map[string]any{
			"queries": len(recs), "limit": o.Limit, "connections": o.Connections,
			"timeout": o.Timeout.String(), "shapes": Shapes,
		},
		Start:     mono.Time(start),
		Duration:  end - start,
		Counts:    map[string]int64{"queries": 0, "failed": 0, "timed_out": 0, "events_returned": 0},
		Aborted:   wd.Aborted(),
		Latency:   map[string]*results.Histogram{},
		Series:    series.Result(end),
		Resources: &results.Resources{ClientCPUSecs: cpu.Seconds()},
	}
	addConnStats(ctx, &ph, conns)
	ph.Errors = verify.AppendUnique(ph.Errors, connErrs...)
	a := led.Result()
	ph.Accounts = append(ph.Accounts, a)
	ph.Counts["cancelled"] = a.Cancelled
	ph.Counts["not_run"] = a.NotRun
	ph.Counts["refused"] = a.Refused
	ver := verifyQueries(recs, model, o.RelayCap)

	all, allFirst := metrics.NewHistogram(), metrics.NewHistogram()
	groups := map[string]*results.Group{}
	groupHists := map[string]*metrics.Histogram{}
	groupBusy := map[string]int64{} // time spent in each shape's queries
	for _, r := range recs {
		if r.ended == "" && r.err == "" {
			continue // never run (interrupted)
		}
		g := groups[r.shape]
		if g == nil {
			g = &results.Group{Name: r.shape, Counts: map[string]int64{"queries": 0, "failed": 0, "events_returned": 0}, Latency: map[string]*results.Histogram{}}
			groups[r.shape] = g
			groupHists[r.shape] = metrics.NewHistogram()
			groupBusy[r.shape] = 0
		}
		g.Counts["events_returned"] += int64(len(r.raws))
		ph.Counts["events_returned"] += int64(len(r.raws))
		if r.ended == "eose" {
			g.Counts["queries"]++
			ph.Counts["queries"]++
			all.Record(r.latency)
			groupHists[r.shape].Record(r.latency)
			groupBusy[r.shape] += r.latency
			if r.first > 0 {
				allFirst.Record(r.first)
			}
		} else {
			g.Counts["failed"]++
			ph.Counts["failed"]++
			if r.ended == string(wire.EndTimeout) {
				ph.Counts["timed_out"]++
			}
			ph.Errors = verify.AppendUnique(ph.Errors, r.shape+" query: "+r.err)
		}
	}
	ph.Latency["eose"] = all.Result()
	if allFirst.Count() > 0 {
		ph.Latency["first_event"] = allFirst.Result()
	}
	secs := float64(ph.Duration) / 1e9
	ph.Rates = map[string]float64{}
	if secs > 0 {
		ph.Rates["queries_per_sec"] = float64(ph.Counts["queries"]) / secs
	}
	for _, s := range Shapes {
		g := groups[s]
		if g == nil {
			continue
		}
		g.Latency["eose"] = groupHists[s].Result()
		// Per shape: its queries divided by the time spent in them (REQ
		// write to EOSE), i.e. that shape's rate on one connection.
		g.Rates = map[string]float64{}
		if busy := groupBusy[s]; busy > 0 {
			g.Rates["queries_per_sec"] = float64(g.Counts["queries"]) / (float64(busy) / 1e9)
		}
		g.Verification = ver.byShape[s]
		ph.Groups = append(ph.Groups, *g)
	}
	ph.Verification = ver.total
	if n := ph.Counts["failed"]; n > 0 {
		ph.Verification.Notes = append(ph.Verification.Notes,
			fmt.Sprintf("%d queries did not end with EOSE (CLOSED, timeout or connection loss): their answers are incomplete and were not verified; the outcomes line says which", n))
	}
	return ph, ctx.Err()
}

type queryVerification struct {
	total   *results.Verification
	byShape map[string]*results.Verification
}

// verifyQueries checks every answer that ended with EOSE with the one
// verifier (valid id and signature, matches its filter, returned once) and,
// when a model is given, against what the relay should have returned.
func verifyQueries(recs []*queryRecord, model *verify.Model, relayCap int) queryVerification {
	sigs := verify.NewChecker()
	var filters []*nostr.Filter
	var parsed [][]*nostr.Event
	var invalid []int64
	var done []*queryRecord
	for _, r := range recs {
		if r.ended != "eose" {
			continue
		}
		var evs []*nostr.Event
		var bad int64
		for _, raw := range r.raws {
			if e, ok := sigs.Check(raw); ok {
				evs = append(evs, e)
			} else {
				bad++
			}
		}
		done = append(done, r)
		filters = append(filters, &r.filter)
		parsed = append(parsed, evs)
		invalid = append(invalid, bad)
	}
	capNote := ""
	if model != nil && relayCap == 0 {
		if relayCap = verify.InferCap(filters, parsed, model); relayCap > 0 {
			capNote = verify.CapNote(relayCap)
		}
	}
	out := queryVerification{total: &results.Verification{Verified: model != nil}, byShape: map[string]*results.Verification{}}
	for i, r := range done {
		v := out.byShape[r.shape]
		if v == nil {
			v = &results.Verification{Verified: model != nil}
			out.byShape[r.shape] = v
		}
		one := verify.Answer(filters[i], parsed[i], invalid[i], model, relayCap)
		verify.Add(v, &one)
		verify.Add(out.total, &one)
	}
	if capNote != "" {
		out.total.Notes = append(out.total.Notes, capNote)
	}
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
