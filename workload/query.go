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
	"github.com/relaybench/relaybench/results"
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
func Query(ctx context.Context, url string, model *Model, source []*nostr.Event, o QueryOptions) (results.Phase, error) {
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
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()

	var next, done atomic.Int64
	var wg sync.WaitGroup
	cpu0 := CPUTime()
	start := mono.Now()
	series := metrics.NewSeries(start)
	for w, cn := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ctx.Err() == nil; n++ {
				k := next.Add(1) - 1
				if k >= int64(len(recs)) {
					return
				}
				r := recs[k]
				qctx, cancel := context.WithTimeout(ctx, o.Timeout)
				qr, err := cn.Query(qctx, "q"+strconv.Itoa(w)+"-"+strconv.Itoa(n), []nostr.Filter{r.filter})
				cancel()
				now := mono.Now()
				r.raws = qr.Events
				if qr.FirstEvent > 0 {
					r.first = qr.FirstEvent - qr.Sent
				}
				switch qr.Ended {
				case wire.EndEOSE:
					r.latency = qr.End - qr.Sent
					r.ended = "eose"
					series.Add(now, "queries", 1)
					series.Latency(now, r.latency)
				case wire.EndClosed:
					r.ended = "closed"
					r.err = "CLOSED: " + qr.Reason
					series.Add(now, "failed", 1)
				default:
					r.ended = string(qr.Ended)
					r.err = string(qr.Ended)
					if err != nil {
						r.err = err.Error()
					}
					series.Add(now, "failed", 1)
				}
				done.Add(1)
				if o.Progress != nil && done.Load()%10 == 0 {
					o.Progress(done.Load())
				}
				if cn.Err() != nil {
					return
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
		Latency:   map[string]*results.Histogram{},
		Series:    series.Result(end),
		Resources: &results.Resources{ClientCPUSecs: cpu.Seconds()},
	}
	addConnStats(&ph, conns)
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
			ph.Errors = appendUnique(ph.Errors, r.shape+" query: "+r.err)
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
	if ph.Counts["failed"] > 0 {
		ph.Verification.Passed = false
		ph.Verification.Notes = append(ph.Verification.Notes,
			fmt.Sprintf("%d queries did not end with EOSE (timeout, CLOSED or connection loss)", ph.Counts["failed"]))
	}
	return ph, ctx.Err()
}

type queryVerification struct {
	total   *results.Verification
	byShape map[string]*results.Verification
}

// verifyQueries checks every returned event (valid id and signature, matches
// its filter, returned once) and, when a model is given, compares each
// answer with what the relay should have returned: the newest `limit`
// matching live events, within the relay's per-REQ cap. Ties on created_at at
// the cut-off are tolerated: any of the tied events may fill the last places.
func verifyQueries(recs []*queryRecord, model *Model, relayCap int) queryVerification {
	sigs := newSigCache()
	parsed := make([][]*nostr.Event, len(recs))
	invalid := make([]int64, len(recs))
	for i, r := range recs {
		for _, raw := range r.raws {
			e, ok := sigs.check(raw)
			if !ok {
				invalid[i]++
				continue
			}
			parsed[i] = append(parsed[i], e)
		}
	}
	capNote := ""
	if model != nil && relayCap == 0 {
		relayCap = inferCap(recs, parsed, model)
		if relayCap > 0 {
			capNote = fmt.Sprintf("the relay returned at most %d events per REQ (observed; not announced in NIP-11 limitation.max_limit): expectations use that cap", relayCap)
		}
	}
	out := queryVerification{total: &results.Verification{Verified: model != nil}, byShape: map[string]*results.Verification{}}
	for i, r := range recs {
		if r.ended != "eose" {
			continue
		}
		v := out.byShape[r.shape]
		if v == nil {
			v = &results.Verification{Verified: model != nil}
			out.byShape[r.shape] = v
		}
		one := verifyOne(r, parsed[i], invalid[i], model, relayCap)
		for _, t := range []*results.Verification{v, out.total} {
			t.Checked++
			t.Returned += int64(len(r.raws))
			t.Invalid += one.Invalid
			t.NotMatching += one.NotMatching
			t.Duplicated += one.Duplicated
			t.Misordered += one.Misordered
			t.Expected += one.Expected
			t.Missing += one.Missing
			t.Extra += one.Extra
			t.Truncated += one.Truncated
			t.Notes = appendUnique(t.Notes, one.Notes...)
		}
	}
	if capNote != "" {
		out.total.Notes = append(out.total.Notes, capNote)
	}
	if model == nil {
		out.total.Notes = append(out.total.Notes, "nothing was published in this run, so missing and extra events cannot be known: only validity and filter match were checked")
	}
	for _, v := range append([]*results.Verification{out.total}, mapValues(out.byShape)...) {
		v.Passed = v.Invalid == 0 && v.NotMatching == 0 && v.Duplicated == 0
		if v.Verified {
			v.Passed = v.Passed && v.Missing == 0 && v.Extra == 0
		}
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

func verifyOne(r *queryRecord, evs []*nostr.Event, invalid int64, model *Model, relayCap int) results.Verification {
	v := results.Verification{Invalid: invalid}
	seen := make(map[string]bool, len(evs))
	var kept []*nostr.Event
	for j, e := range evs {
		if seen[e.ID] {
			v.Duplicated++
			continue
		}
		seen[e.ID] = true
		if !r.filter.Matches(e) {
			v.NotMatching++
			continue
		}
		if j > 0 && e.CreatedAt > evs[j-1].CreatedAt {
			v.Misordered++
		}
		kept = append(kept, e)
	}
	if model == nil {
		return v
	}
	expected, all := model.Expected(&r.filter, relayCap)
	v.Expected = int64(len(expected))
	if relayCap > 0 && len(expected) < len(all) && (r.filter.Limit == 0 || relayCap < r.filter.Limit) {
		v.Truncated++
	}
	// Everything strictly newer than the cut-off must be there; at the cut-off
	// timestamp any tied events may fill the remaining places.
	cut := int64(-1 << 62)
	if len(expected) > 0 && len(expected) < len(all) {
		cut = expected[len(expected)-1].CreatedAt
	}
	got := make(map[string]bool, len(kept))
	gotAtCut := 0
	for _, e := range kept {
		acc, replaced := model.Accepted(e.ID)
		switch {
		case !acc:
			v.Extra++
			v.Notes = appendUnique(v.Notes, "returned events relaybench never published or that the relay refused (a relay with old data, or one that stores refused events)")
			continue
		case replaced:
			v.Extra++
			v.Notes = appendUnique(v.Notes, "returned replaceable events that a newer accepted event had replaced")
			continue
		case e.CreatedAt < cut:
			v.Extra++
			v.Notes = appendUnique(v.Notes, "returned events older than the newest ones the limit asked for")
			continue
		}
		got[e.ID] = true
		if e.CreatedAt == cut {
			gotAtCut++
		}
	}
	needAtCut := 0
	for _, e := range expected {
		if e.CreatedAt == cut {
			needAtCut++
			continue
		}
		if !got[e.ID] {
			v.Missing++
		}
	}
	if gotAtCut < needAtCut {
		v.Missing += int64(needAtCut - gotAtCut)
	}
	if v.Missing > 0 {
		v.Notes = appendUnique(v.Notes, "accepted events matching the filter were not returned")
	}
	return v
}

// inferCap looks for a per-REQ cap the relay did not announce: if every
// answer that came back short of its expectation has the same size N, and at
// least two did, the relay caps at N.
func inferCap(recs []*queryRecord, parsed [][]*nostr.Event, model *Model) int {
	short := -1
	count := 0
	for i, r := range recs {
		if r.ended != "eose" {
			continue
		}
		exp, _ := model.Expected(&r.filter, 0)
		n := len(parsed[i])
		if n >= len(exp) {
			continue
		}
		if short == -1 {
			short = n
		} else if short != n {
			return 0
		}
		count++
	}
	if count >= 2 && short > 0 {
		return short
	}
	return 0
}
