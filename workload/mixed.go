package workload

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/relaybench/relaybench/corpus"
	"github.com/relaybench/relaybench/internal/mono"
	"github.com/relaybench/relaybench/metrics"
	"github.com/relaybench/relaybench/nostr"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/verify"
	"github.com/relaybench/relaybench/wire"
)

// MixedOptions configure the mixed read/write workload.
type MixedOptions struct {
	Duration    time.Duration // length of each part: publish alone, query alone, together (default 5 s)
	PublishRate float64       // total events/s, open loop (default 1000)
	QueryRate   float64       // total queries/s, open loop (default 50)
	Publishers  int           // publisher connections (default 2)
	Queriers    int           // query connections, one REQ at a time each (default 2)
	Window      int           // max unacknowledged EVENTs per publisher (default 1024)
	Size        int           // content bytes of the fresh events (default 1024)
	Limit       int           // limit of each query filter (default 100)
	Timeout     time.Duration // OK and EOSE timeout (default 10 s)
	Seed        int64
	RelayCap    int // NIP-11 limitation.max_limit (0: unknown)
	// Source holds the events query filters are drawn from: events the
	// relay holds (default: the corpus, which the caller publishes first).
	Source   []*nostr.Event
	Dial     wire.Options
	Progress func(part string)
}

// mixedPart is what one part measured.
type mixedPart struct {
	name                 string
	start, end           int64
	pub                  *results.Phase // publishing side (nil: not run)
	okHist               *metrics.Histogram
	recs                 []*queryRecord
	eose, eoseInt, first *metrics.Histogram
	queries, failed      int64
	lateQueries          int64
	cpu                  time.Duration
}

// Mixed runs publishers and queriers at once, each open loop at its own
// rate, after running each side alone for the same duration as a baseline.
// It reports both sides' throughput and latency alone and together (Groups
// "publish/alone", "query/alone", "publish/together", "query/together") and
// the ratios together/alone. Query answers are checked for validity and
// filter match (what the relay should return changes while events arrive,
// so missing events are not judged).
func Mixed(ctx context.Context, url string, c *corpus.Corpus, o MixedOptions) (results.Phase, error) {
	ph := results.Phase{Name: "mixed", Workload: "mixed"}
	if o.Duration <= 0 {
		o.Duration = 5 * time.Second
	}
	if o.PublishRate <= 0 {
		o.PublishRate = 1000
	}
	if o.QueryRate <= 0 {
		o.QueryRate = 50
	}
	if o.Publishers <= 0 {
		o.Publishers = 2
	}
	if o.Queriers <= 0 {
		o.Queriers = 2
	}
	if o.Window <= 0 {
		o.Window = 1024
	}
	if o.Size <= 0 {
		o.Size = 1024
	}
	if o.Limit <= 0 {
		o.Limit = 100
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	source := o.Source
	if len(source) == 0 {
		source = c.Events
	}
	b, err := newShapeBuilder(source, o.Limit, o.Seed)
	if err != nil {
		return ph, err
	}
	perPart := max(1, int(o.PublishRate*o.Duration.Seconds()))
	nonce := RunNonce()
	fresh, err := NewFresh(ctx, c, FreshSpec{Count: 2 * perPart, Size: o.Size, Seed: o.Seed, Channels: ChannelNames(o.Seed, nonce, 4)}, nonce)
	if err != nil {
		return ph, err
	}
	nQ := max(1, int(o.QueryRate*o.Duration.Seconds()))
	filters := func() []*queryRecord {
		recs := make([]*queryRecord, 0, nQ)
		for i := 0; len(recs) < nQ && i < nQ*4; i++ {
			shape := Shapes[i%len(Shapes)]
			if f, ok := b.build(shape); ok {
				recs = append(recs, &queryRecord{shape: shape, filter: f})
			}
		}
		return recs
	}
	dial := o.Dial
	dial.OKTimeout = o.Timeout
	pubConns, err := wire.DialPool(ctx, url, o.Publishers, dial)
	if err != nil {
		return ph, fmt.Errorf("publishers: %w", err)
	}
	defer closeAll(pubConns)
	qConns, err := wire.DialPool(ctx, url, o.Queriers, o.Dial)
	if err != nil {
		return ph, fmt.Errorf("queriers: %w", err)
	}
	defer closeAll(qConns)

	var parts []*mixedPart
	run := func(name string, pub, query bool, first int) *mixedPart {
		if o.Progress != nil {
			o.Progress(name)
		}
		p := &mixedPart{name: name, eose: metrics.NewHistogram(), eoseInt: metrics.NewHistogram(), first: metrics.NewHistogram()}
		var recs []*queryRecord
		if query {
			recs = filters()
		}
		cpu0 := CPUTime()
		p.start = mono.Now()
		stopAt := p.start + int64(o.Duration)
		var wg sync.WaitGroup
		if pub {
			wg.Add(1)
			go func() {
				defer wg.Done()
				p.pub, p.okHist = mixedPublish(ctx, pubConns, fresh, first, perPart, o, p.start, stopAt)
			}()
		}
		if query {
			p.recs = recs
			var mu sync.Mutex
			for q, cn := range qConns {
				wg.Add(1)
				go func() {
					defer wg.Done()
					eose, eoseInt, firstH := metrics.NewHistogram(), metrics.NewHistogram(), metrics.NewHistogram()
					var n, failed, late int64
					for k := q; k < len(recs) && ctx.Err() == nil; k += len(qConns) {
						intended := p.start + int64(float64(k)*1e9/o.QueryRate)
						if intended >= stopAt {
							break
						}
						sleepUntil(ctx, intended)
						if mono.Now()-intended > int64(time.Millisecond) {
							late++
						}
						r := recs[k]
						qctx, cancel := context.WithTimeout(ctx, o.Timeout)
						qr, qerr := cn.Query(qctx, "m"+strconv.Itoa(q)+"-"+strconv.Itoa(k), []nostr.Filter{r.filter})
						cancel()
						r.raws = qr.Events
						if qr.Ended == wire.EndEOSE {
							r.ended = "eose"
							r.latency = qr.End - qr.Sent
							eose.Record(r.latency)
							eoseInt.Record(qr.End - intended)
							if qr.FirstEvent > 0 {
								firstH.Record(qr.FirstEvent - qr.Sent)
							}
							n++
						} else {
							r.ended = string(qr.Ended)
							r.err = string(qr.Ended)
							if qerr != nil {
								r.err = qerr.Error()
							} else if qr.Reason != "" {
								r.err = "CLOSED: " + qr.Reason
							}
							failed++
						}
						if cn.Err() != nil {
							return
						}
					}
					mu.Lock()
					p.eose.Merge(eose)
					p.eoseInt.Merge(eoseInt)
					p.first.Merge(firstH)
					p.queries += n
					p.failed += failed
					p.lateQueries += late
					mu.Unlock()
				}()
			}
		}
		wg.Wait()
		p.end = max(mono.Now(), p.start+1)
		if p.pub != nil {
			p.end = max(p.end, p.start+p.pub.Duration)
		}
		p.cpu = CPUTime() - cpu0
		parts = append(parts, p)
		return p
	}
	pubAlone := run("publish/alone", true, false, 0)
	var qAlone, together *mixedPart
	if ctx.Err() == nil {
		qAlone = run("query/alone", false, true, 0)
	}
	if ctx.Err() == nil {
		together = run("together", true, true, perPart)
	}

	// Assemble the phase.
	ph.Params = map[string]any{
		"duration": o.Duration.String(), "publish_rate": o.PublishRate, "query_rate": o.QueryRate,
		"publishers": o.Publishers, "queriers": o.Queriers, "window": o.Window, "size": o.Size,
		"limit": o.Limit, "timeout": o.Timeout.String(),
	}
	ph.Start = mono.Time(parts[0].start)
	ph.Counts = map[string]int64{}
	ph.Refused = map[string]int64{}
	ph.Latency = map[string]*results.Histogram{}
	ph.Rates = map[string]float64{}
	var cpu time.Duration
	var allRecs []*queryRecord
	for _, p := range parts {
		ph.Duration += p.end - p.start
		cpu += p.cpu
		allRecs = append(allRecs, p.recs...)
	}
	ver := verifyQueries(allRecs, nil, o.RelayCap)
	ver.total.Notes = dropPrefixed(ver.total.Notes, "nothing was published in this run")
	ver.total.Notes = append(ver.total.Notes, "events arrive while the queries run, so answers are checked for validity, filter match and duplicates only (not for missing events)")
	ph.Verification = ver.total
	// Validity, filter match and duplicates were checked for every answer.
	ph.Verification.Verified = ph.Verification.Checked > 0

	pubGroup := func(p *mixedPart, suffix string) (float64, *metrics.Histogram) {
		if p == nil || p.pub == nil {
			return 0, nil
		}
		g := results.Group{Name: "publish/" + suffix, Counts: p.pub.Counts, Rates: p.pub.Rates, Latency: p.pub.Latency}
		ph.Groups = append(ph.Groups, g)
		for k, v := range p.pub.Counts {
			ph.Counts["publish_"+suffix+"_"+k] = v
		}
		ph.Errors = verify.AppendUnique(ph.Errors, p.pub.Errors...)
		for _, n := range p.pub.Notes {
			ph.Notes = append(ph.Notes, "publish/"+suffix+": "+n)
		}
		return p.pub.Rates["events_per_sec"], p.okHist
	}
	queryGroup := func(p *mixedPart, suffix string) (float64, *metrics.Histogram) {
		if p == nil || p.recs == nil {
			return 0, nil
		}
		secs := float64(p.end-p.start) / 1e9
		g := results.Group{Name: "query/" + suffix, Counts: map[string]int64{"queries": p.queries, "failed": p.failed, "late_start": p.lateQueries},
			Rates: map[string]float64{}, Latency: map[string]*results.Histogram{"eose": p.eose.Result(), "eose_from_intended": p.eoseInt.Result()}}
		if p.first.Count() > 0 {
			g.Latency["first_event"] = p.first.Result()
		}
		var returned int64
		for _, r := range p.recs {
			returned += int64(len(r.raws))
			if r.err != "" {
				ph.Errors = verify.AppendUnique(ph.Errors, "query: "+r.err)
			}
		}
		g.Counts["events_returned"] = returned
		if secs > 0 {
			g.Rates["queries_per_sec"] = float64(p.queries) / secs
		}
		if p.queries > 0 {
			g.Rates["events_per_query"] = float64(returned) / float64(p.queries)
		}
		ph.Groups = append(ph.Groups, g)
		ph.Counts["query_"+suffix+"_queries"] = p.queries
		ph.Counts["query_"+suffix+"_failed"] = p.failed
		return g.Rates["queries_per_sec"], p.eose
	}
	pa, okAlone := pubGroup(pubAlone, "alone")
	qa, eoseAlone := queryGroup(qAlone, "alone")
	pt, okTog := pubGroup(together, "together")
	qt, eoseTog := queryGroup(together, "together")
	if okTog != nil {
		ph.Latency["ok"] = okTog.Result()
	}
	if eoseTog != nil {
		ph.Latency["eose"] = eoseTog.Result()
	}
	if okAlone != nil {
		ph.Latency["ok_alone"] = okAlone.Result()
	}
	if eoseAlone != nil {
		ph.Latency["eose_alone"] = eoseAlone.Result()
	}
	ph.Rates["events_per_sec_alone"], ph.Rates["queries_per_sec_alone"] = pa, qa
	ph.Rates["events_per_sec"], ph.Rates["queries_per_sec"] = pt, qt
	ratio := func(name string, a, b float64, unit string) {
		if a > 0 && b > 0 {
			ph.Rates[name] = b / a
			ph.Notes = append(ph.Notes, fmt.Sprintf("%s together/alone: %.2f× (%s %s alone, %s together)", strings.ReplaceAll(name, "_", " "), b/a, fmtNum(a), unit, fmtNum(b)))
		}
	}
	latRatio := func(name string, a, b int64) {
		if a > 0 && b > 0 {
			ph.Rates[name] = float64(b) / float64(a)
			ph.Notes = append(ph.Notes, fmt.Sprintf("%s together/alone: %.2f× (%v alone, %v together)", strings.ReplaceAll(name, "_", " "), float64(b)/float64(a), time.Duration(a).Round(time.Microsecond), time.Duration(b).Round(time.Microsecond)))
		}
	}
	ratio("publish_throughput_ratio", pa, pt, "events/s")
	ratio("query_throughput_ratio", qa, qt, "queries/s")
	if okAlone != nil && okTog != nil && okAlone.Count() > 0 && okTog.Count() > 0 {
		latRatio("ok_p50_ratio", okAlone.Quantile(50), okTog.Quantile(50))
		latRatio("ok_p99_ratio", okAlone.Quantile(99), okTog.Quantile(99))
	}
	if eoseAlone != nil && eoseTog != nil && eoseAlone.Count() > 0 && eoseTog.Count() > 0 {
		latRatio("eose_p50_ratio", eoseAlone.Quantile(50), eoseTog.Quantile(50))
		latRatio("eose_p99_ratio", eoseAlone.Quantile(99), eoseTog.Quantile(99))
	}
	addConnStats(ctx, &ph, append(append([]*wire.Conn(nil), pubConns...), qConns...))
	judgeClientCPU(&ph, cpu)
	ph.Notes = append(ph.Notes,
		fmt.Sprintf("three parts of %v each: publish alone (%.0f events/s over %d connections), query alone (%.0f queries/s over %d connections, one REQ at a time each), then both together", o.Duration, o.PublishRate, o.Publishers, o.QueryRate, o.Queriers),
		"open loop: sends and REQs follow a schedule; ok_from_intended and eose_from_intended count from the scheduled time, so a stalled client or relay shows up in them",
		"duration is the sum of the three parts",
	)
	if ctx.Err() != nil {
		ph.Notes = append(ph.Notes, "interrupted: later parts did not run")
	}
	return ph, ctx.Err()
}

// mixedPublish publishes fresh events first…first+n-1 open loop at
// o.PublishRate until stopAt and returns the publishing side as a phase.
func mixedPublish(ctx context.Context, conns []*wire.Conn, fresh *Fresh, first, n int, o MixedOptions, start, stopAt int64) (*results.Phase, *metrics.Histogram) {
	plan := &livePlan{conns: conns, fresh: fresh, window: o.Window, timeout: o.Timeout, stopAt: stopAt, series: metrics.NewSeries(start), okLatencySeries: true}
	plan.order = make([][]int, len(conns))
	plan.intended = make([][]int64, len(conns))
	for k := 0; k < n; k++ {
		w := k % len(conns)
		plan.order[w] = append(plan.order[w], first+k)
		plan.intended[w] = append(plan.intended[w], start+int64(float64(k)*1e9/o.PublishRate))
	}
	out := newLiveOut(len(fresh.Events))
	runLive(ctx, plan, out)
	end := max(out.lastOK.Load(), start+1)
	ph := &results.Phase{Duration: end - start, Counts: map[string]int64{}, Refused: map[string]int64{}, Latency: map[string]*results.Histogram{}}
	hist := publishSummary(ph, out, n)
	if ns := ph.Counts["not_sent"]; ns > 0 {
		ph.Notes = append(ph.Notes, fmt.Sprintf("%d of %d scheduled events were still unsent when the part ended (the client or the relay fell behind the schedule)", ns, n))
	}
	secs := float64(ph.Duration) / 1e9
	ph.Rates = map[string]float64{"events_per_sec": float64(ph.Counts["accepted"]) / secs, "intended_per_sec": o.PublishRate}
	return ph, hist
}

func dropPrefixed(list []string, prefix string) []string {
	out := list[:0]
	for _, s := range list {
		if !strings.HasPrefix(s, prefix) {
			out = append(out, s)
		}
	}
	return out
}

func fmtNum(v float64) string {
	if v >= 100 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}
