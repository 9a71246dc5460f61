package report

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/relaybench/relaybench/results"
)

// relayRuns are the runs of one relay (several when repeated), across files.
type relayRuns struct {
	key   string // Relay.Name, or the URL for a plain URL
	relay results.Relay
	runs  []*results.Run
}

// relayKey names a relay in tables: its catalog name, else its URL.
func relayKey(r *results.Relay) string {
	if r.Name != "" {
		return r.Name
	}
	return r.URL
}

// groupRuns groups the runs of files by relay, in order of first appearance.
func groupRuns(files []*results.File) []*relayRuns {
	var out []*relayRuns
	idx := map[string]*relayRuns{}
	for _, f := range files {
		for i := range f.Runs {
			r := &f.Runs[i]
			k := relayKey(&r.Relay)
			g := idx[k]
			if g == nil {
				g = &relayRuns{key: k, relay: r.Relay}
				idx[k] = g
				out = append(out, g)
			}
			if g.relay.Software == "" {
				g.relay.Software, g.relay.Version = r.Relay.Software, r.Relay.Version
			}
			g.runs = append(g.runs, r)
		}
	}
	return out
}

// phases returns the phases named name of g's runs.
func (g *relayRuns) phases(name string) []*results.Phase {
	var ps []*results.Phase
	for _, r := range g.runs {
		if p := r.Phase(name); p != nil {
			ps = append(ps, p)
		}
	}
	return ps
}

// phaseNames lists the phase names of all runs in order of first appearance.
func phaseNames(groups []*relayRuns) []string {
	return firstOfEach(groups, func(r *results.Run) []results.Phase { return r.Phases },
		func(p *results.Phase) (string, string) { return p.Name, p.Name })
}

// firstOfEach lists, over every run of groups, the value pick gives each of
// the run's items (items) whose key it has not given before: one value per
// key, in order of first appearance.
func firstOfEach[T, V any](groups []*relayRuns, items func(*results.Run) []T, pick func(*T) (key string, v V)) []V {
	var out []V
	seen := map[string]bool{}
	for _, g := range groups {
		for _, r := range g.runs {
			its := items(r)
			for i := range its {
				if k, v := pick(&its[i]); !seen[k] {
					seen[k] = true
					out = append(out, v)
				}
			}
		}
	}
	return out
}

// repeated reports whether any relay has more than one run.
func repeated(groups []*relayRuns) bool {
	for _, g := range groups {
		if len(g.runs) > 1 {
			return true
		}
	}
	return false
}

// column is one numeric column of a table of T (a phase of each relay's
// runs, or a phase's groups): its header, figure and format.
type column[T any] struct {
	head string
	get  func(*T) (float64, bool)
	fmt  func(float64) string
}

// col is a column of a per-relay table; gcol of a group table.
type (
	col  = column[results.Phase]
	gcol = column[results.Group]
)

// agg formats the values one figure took over repeated runs: the value
// itself for one run, else the median and the spread "median (min–max)".
func agg(vs []float64, format func(float64) string) string {
	switch len(vs) {
	case 0:
		return dash
	case 1:
		return format(vs[0])
	}
	lo, hi := minMax(vs)
	m := median(append([]float64(nil), vs...))
	if format(lo) == format(hi) {
		return format(m) // no spread at this precision
	}
	return fmt.Sprintf("%s (%s–%s)", format(m), format(lo), format(hi))
}

// present is the values get finds among xs, in order.
func present[T any](xs []T, get func(T) (float64, bool)) []float64 {
	var vs []float64
	for _, x := range xs {
		if v, ok := get(x); ok {
			vs = append(vs, v)
		}
	}
	return vs
}

// aggStatus merges the status of the phases one row stands for:
// "verification FAILED (2/3 runs), client-limited".
func aggStatus(ps []*results.Phase) string {
	out := tally(ps, phaseStatus)
	if out == "" {
		return "ok"
	}
	return out
}

// tally joins the labels of xs in order of first appearance, each marked
// with its share of the runs when not every run has it.
func tally[T any](xs []T, labels func(T) []string) string {
	n := map[string]int{}
	var order []string
	for _, x := range xs {
		for _, s := range labels(x) {
			if n[s] == 0 {
				order = append(order, s)
			}
			n[s]++
		}
	}
	var out []string
	for _, s := range order {
		if len(xs) > 1 && n[s] < len(xs) {
			s = fmt.Sprintf("%s (%d/%d runs)", s, n[s], len(xs))
		}
		out = append(out, s)
	}
	return strings.Join(out, ", ")
}

// phaseTable is one row per relay for phase name with the given columns and
// a final Status column.
func phaseTable(titleText, name string, groups []*relayRuns, cols []col) *table {
	t := &table{title: titleText, head: []string{"Relay"}, left: map[int]bool{len(cols) + 1: true}}
	for _, c := range cols {
		t.head = append(t.head, c.head)
	}
	t.head = append(t.head, "Status")
	for _, g := range groups {
		ps := g.phases(name)
		if len(ps) == 0 {
			continue
		}
		row := []string{g.key}
		for _, c := range cols {
			cell := agg(present(ps, c.get), c.fmt)
			if c.head == rateHead(results.RateMaxRate) && slices.ContainsFunc(ps, func(p *results.Phase) bool { return MaxRateBound(p) != "" }) {
				cell = "≥ " + cell // the search stopped short of the relay's figure (summary.go)
			}
			row = append(row, cell)
		}
		t.add(append(row, aggStatus(ps))...)
	}
	if len(t.rows) == 0 {
		return nil
	}
	return t
}

func cntCol(head, name string) col {
	return col{head, func(p *results.Phase) (float64, bool) { return count(p.Counts, name) },
		func(v float64) string { return fmtInt(int64(v)) }}
}

func rateCol(head, name string) col {
	return col{head, func(p *results.Phase) (float64, bool) { return rate(p.Rates, name) }, rateFmt(name)}
}

// isShare reports whether rate k is a share (0 to 1), not a per-second rate:
// a success rate, or search's recall (its note says "recall 99.5%": the
// summary read "Recall: 1.00" beside it).
func isShare(k string) bool { return strings.HasSuffix(k, "success_rate") || k == "recall" }

// fmtShare formats a share in percent with two decimals: 0.9995 →
// "99.95%", so that a single failure is not rounded away to 100%.
func fmtShare(v float64) string { return fmtFloat(v*100, 2) + "%" }

func latCol(head, name string, q float64) col {
	return col{head, func(p *results.Phase) (float64, bool) {
		v, ok := latQ(p.Latency[name], q)
		return float64(v), ok
	}, fmtDur}
}

var durCol = col{"Duration", durNs, fmtDur}

func publishTable(groups []*relayRuns) *table {
	return phaseTable("Publishing", "publish", groups, []col{
		cntCol("Sent", results.CountSent),
		cntCol("Accepted", results.CountAccepted),
		{"Data size", func(p *results.Phase) (float64, bool) { return count(p.Counts, results.CountBytesSent) }, fmtBytes},
		durCol,
		rateCol("Events/s", results.RateEvents),
		{"Bandwidth", bandwidth, func(v float64) string { return fmtMiBps(v) + " MiB/s" }},
		latCol("OK p50", results.LatencyOK, 50),
		latCol("OK p99", results.LatencyOK, 99),
	})
}

func queryTable(groups []*relayRuns) *table {
	return phaseTable("Querying", "query", groups, []col{
		cntCol("Queries", results.CountQueries),
		cntCol("Events retrieved", results.CountEventsReturned),
		durCol,
		rateCol("Queries/s", results.RateQueries),
		{"Avg events/query", func(p *results.Phase) (float64, bool) { return avgPerQuery(p.Counts) },
			func(v float64) string { return fmtFloat(v, 2) }},
		latCol("EOSE p50", results.LatencyEOSE, 50),
		latCol("EOSE p99", results.LatencyEOSE, 99),
	})
}

// figureNames gathers the names of the counters and rates of phases or
// groups, and the last histogram seen under each latency name.
type figureNames struct {
	counts, rates map[string]bool
	lats          map[string]*results.Histogram
}

func (fs *figureNames) add(counts map[string]int64, rates map[string]float64, lats map[string]*results.Histogram) {
	if fs.counts == nil {
		fs.counts, fs.rates, fs.lats = map[string]bool{}, map[string]bool{}, map[string]*results.Histogram{}
	}
	for k := range figureCounts(counts) {
		fs.counts[k] = true
	}
	for k := range rates {
		fs.rates[k] = true
	}
	for k, h := range lats {
		fs.lats[k] = h
	}
}

// tableRateHead is rate k's column head in a table of phases ps: a
// subscribe phase's MiB/s is what its publishers sent (the subscribers'
// bytes are not in it), "Publish MiB/s", as its summary's "Publish
// bandwidth" says.
func tableRateHead(k string, ps []*results.Phase) string {
	if k == results.RateMB && len(ps) > 0 && !slices.ContainsFunc(ps, func(p *results.Phase) bool { return kind(p) != "subscribe" }) {
		return "Publish MiB/s"
	}
	return rateHead(k)
}

// genericTable covers any phase: duration, every counter and rate the runs
// hold, and the primary latency's percentiles.
func genericTable(name string, groups []*relayRuns) *table {
	var fs figureNames
	var ps []*results.Phase
	for _, g := range groups {
		for _, p := range g.phases(name) {
			fs.add(p.Counts, p.Rates, p.Latency)
			ps = append(ps, p)
		}
	}
	// A figure of one of the phase's groups ("publish_alone_sent") is in
	// the group table that follows, a mixed phase's rates and ratios in
	// its together-vs-alone table: all runs' phases must agree.
	shown := func(k string) bool {
		return len(ps) > 0 && !slices.ContainsFunc(ps, func(p *results.Phase) bool { return !groupFigure(p, k) && !mixedFigure(p, k) })
	}
	counts, rates, lats := fs.counts, fs.rates, fs.lats
	cols := []col{durCol}
	for _, k := range sortedKeys(counts) {
		if perBurst.MatchString(k) || shown(k) {
			continue // one column per burst: their recovery is summed up below
		}
		cols = append(cols, countCol(k))
	}
	for _, k := range sortedKeys(rates) {
		if !shown(k) {
			cols = append(cols, rateCol(tableRateHead(k, ps), k))
		}
	}
	l := results.PrimaryLatency(lats)
	if l != "" {
		lb := title(latencyLabel(l))
		cols = append(cols, latCol(lb+" p50", l, 50), latCol(lb+" p99", l, 99), latCol(lb+" p99.9", l, 99.9), latCol(lb+" max", l, 100))
	}
	timed := []string{l}
	if d := results.LatencyDeliver; l != d && lats[d] != nil {
		// subscribe's OK latency is primary, but its live delivery latency
		// is what a comparison of relays is about: p50 and p99 beside it.
		cols = append(cols, latCol("Delivery p50", d, 50), latCol("Delivery p99", d, 99))
		timed = append(timed, d)
	}
	if lats["recovery"] != nil {
		cols = append(cols, latCol("Recovery p50", "recovery", 50), latCol("Recovery max", "recovery", 100))
	}
	t := phaseTable(title(name), name, groups, cols)
	if lead := timingLead(lats, timed); t != nil && lead != "" {
		t.lead = append(t.lead, lead)
	}
	return t
}

// perBurst are burst's counters of one burst ("burst_3_recovery_ns").
var perBurst = regexp.MustCompile(`^burst_[0-9]+_`)

// countCol is counter k's column in the unit the summary prints it in:
// bytes, and times kept in ns or µs as durations ("recovery ns
// 400,000,000" is "recovery 400ms").
func countCol(k string) col {
	get := func(p *results.Phase) (float64, bool) { return count(p.Counts, k) }
	h := countHead(k)
	switch {
	case isBytes(k):
		return col{h, get, fmtBytes}
	case strings.HasSuffix(k, "_ns"):
		return col{h, get, fmtDur}
	case strings.HasSuffix(k, "_us") || strings.Contains(k, "_us_"): // client_cpu_us_p50
		return col{h, get, func(v float64) string { return fmtDur(v * 1e3) }}
	}
	return cntCol(h, k)
}

// groupTable has one row per (relay, group) of phase name: query shapes,
// payload sizes, … . Groups of repeated runs are aggregated like phases.
func groupTable(name string, groups []*relayRuns) *table {
	var fs figureNames
	for _, g := range groups {
		for _, p := range g.phases(name) {
			for _, gr := range p.Groups {
				fs.add(gr.Counts, gr.Rates, gr.Latency)
			}
		}
	}
	query := queryGroups(name, groups)
	head := []string{"Relay", "Group"}
	if query {
		head[1] = "Shape"
	}
	var cols []gcol
	if query {
		cols = []gcol{
			{"Queries", func(g *results.Group) (float64, bool) { return count(g.Counts, results.CountQueries) }, func(v float64) string { return fmtInt(int64(v)) }},
			{"Queries/s", func(g *results.Group) (float64, bool) { return rate(g.Rates, results.RateQueries) }, fmtRate},
			{"Avg events/query", func(g *results.Group) (float64, bool) { return avgPerQuery(g.Counts) }, func(v float64) string { return fmtFloat(v, 2) }},
		}
	} else {
		for _, k := range sortedKeys(fs.counts) {
			c := countCol(k)
			cols = append(cols, gcol{c.head, func(g *results.Group) (float64, bool) { return count(g.Counts, k) }, c.fmt})
		}
		for _, k := range sortedKeys(fs.rates) {
			cols = append(cols, gcol{rateHead(k), func(g *results.Group) (float64, bool) { return rate(g.Rates, k) }, rateFmt(k)})
		}
	}
	prims := groupLatencies(groups, name)
	cols = append(cols, groupLatencyCols(prims, fs.lats)...)
	for _, c := range cols {
		head = append(head, c.head)
	}
	head = append(head, "Verification")
	t := &table{title: title(name) + " by group", head: head, left: map[int]bool{1: true, len(head) - 1: true}}
	if name == "query" {
		t.title = "Query shapes"
	}
	if l := timingLead(fs.lats, prims); l != "" {
		t.lead = append(t.lead, l)
	}
	for _, g := range groups {
		ps := g.phases(name)
		var gnames []string
		seen := map[string]bool{}
		for _, p := range ps {
			for _, gr := range p.Groups {
				if !seen[gr.Name] {
					seen[gr.Name] = true
					gnames = append(gnames, gr.Name)
				}
			}
		}
		for _, gn := range gnames {
			var grs []*results.Group
			for _, p := range ps {
				for i := range p.Groups {
					if p.Groups[i].Name == gn {
						grs = append(grs, &p.Groups[i])
					}
				}
			}
			row := []string{g.key, groupCell(gn)}
			for _, c := range cols {
				row = append(row, agg(present(grs, c.get), c.fmt))
			}
			var vers []*results.Verification
			for _, gr := range grs {
				vers = append(vers, gr.Verification)
			}
			t.add(append(row, aggVerdict(vers))...)
		}
	}
	if len(t.rows) == 0 {
		return nil
	}
	return t
}

// queryGroups reports whether phase name's groups are query shapes: the
// query phase's, or another phase of the query workload's (clients'),
// whose table then has the query shapes table's columns in its order.
func queryGroups(name string, groups []*relayRuns) bool {
	if name == "query" {
		return true
	}
	for _, g := range groups {
		for _, p := range g.phases(name) {
			if p.Workload == "query" {
				return true
			}
		}
	}
	return false
}

// groupLatencyCols are a group table's latency columns: p50 and p99 of
// each latency of prims; query shapes (EOSE alone) also time the first
// event (REQ → first EVENT) when lats hold it.
func groupLatencyCols(prims []string, lats map[string]*results.Histogram) []gcol {
	var cols []gcol
	add := func(head, l string) {
		for _, q := range []float64{50, 99} {
			cols = append(cols, gcol{fmt.Sprintf("%s p%g", head, q), func(g *results.Group) (float64, bool) {
				v, ok := latQ(g.Latency[l], q)
				return float64(v), ok
			}, fmtDur})
		}
	}
	for _, l := range prims {
		add(title(latencyLabel(l)), l)
		if len(prims) == 1 && l == results.LatencyEOSE && lats[results.LatencyFirstEvent] != nil {
			add("First event", results.LatencyFirstEvent)
		}
	}
	return cols
}

// groupLatencies are the primary latencies of phase name's groups, each
// once, in the order the groups have them: one for groups that all time
// the same answer, OK and EOSE for a mixed load's publishes and queries.
func groupLatencies(groups []*relayRuns, name string) []string {
	var ls []string
	for _, g := range groups {
		for _, p := range g.phases(name) {
			for _, gr := range p.Groups {
				if l := results.PrimaryLatency(gr.Latency); l != "" && !slices.Contains(ls, l) {
					ls = append(ls, l)
				}
			}
		}
	}
	return ls
}

// aggVerdict merges verdicts of repeated runs: "PASSED", "FAILED (1/3 runs)".
func aggVerdict(vs []*results.Verification) string {
	return tally(vs, func(v *results.Verification) []string { return []string{verdict(v)} })
}

// sweepPoint is one payload size of a sweep for one run.
type sweepPoint struct {
	size  float64
	phase *results.Phase // set for "sweep/<bytes>" phases
	group *results.Group // set for groups of a "sweep" phase
	p     *results.Phase // the phase holding the point (for its status)
}

func (s sweepPoint) counts() map[string]int64 {
	if s.group != nil {
		return s.group.Counts
	}
	return s.phase.Counts
}
func (s sweepPoint) rates() map[string]float64 {
	if s.group != nil {
		return s.group.Rates
	}
	return s.phase.Rates
}
func (s sweepPoint) latency() map[string]*results.Histogram {
	if s.group != nil {
		return s.group.Latency
	}
	return s.phase.Latency
}

// sweep returns run r's sweep points sorted by payload size: phases named
// "sweep/<bytes>", or else the groups (named "<bytes>") of a phase named
// "sweep".
func sweep(r *results.Run) []sweepPoint {
	var pts []sweepPoint
	for i := range r.Phases {
		p := &r.Phases[i]
		if isSweepPhase(p.Name) && p.Size > 0 {
			pts = append(pts, sweepPoint{size: float64(p.Size), phase: p, p: p})
		}
	}
	if len(pts) == 0 {
		if p := r.Phase("sweep"); p != nil {
			for i := range p.Groups {
				if sz, ok := sweepSize(p.Groups[i].Name); ok {
					pts = append(pts, sweepPoint{size: sz, group: &p.Groups[i], p: p})
				}
			}
		}
	}
	sort.SliceStable(pts, func(i, j int) bool { return pts[i].size < pts[j].size })
	return pts
}

// sweepRate returns msg/s of a sweep point: events_per_sec, else
// deliveries_per_sec, else messages_per_sec.
func sweepRate(pt sweepPoint) (float64, bool) {
	for _, k := range []string{results.RateEvents, "messages_per_sec", results.RateDeliveries} {
		if v, ok := pt.rates()[k]; ok {
			return v, true
		}
	}
	return 0, false
}

func sweepMB(pt sweepPoint) (float64, bool) {
	if v, ok := pt.rates()[results.RateMB]; ok {
		return mibps(v), true
	}
	if pt.phase != nil {
		return bandwidth(pt.phase) // MiB/s
	}
	return 0, false
}

func sweepTotal(pt sweepPoint) (float64, bool) {
	for _, k := range []string{results.CountAccepted, results.CountDeliveries, results.CountSent} {
		if v, ok := pt.counts()[k]; ok {
			return float64(v), true
		}
	}
	return 0, false
}

// sweepLatency is the latency a sweep point's table row and chart give:
// a fan-out sweep's delivery latency (publisher's write → subscriber's
// read), else its primary one (an old publish sweep's OK latency).
func sweepLatency(pt sweepPoint) string {
	if h := pt.latency()[results.LatencyDeliver]; h != nil && h.Count > 0 {
		return results.LatencyDeliver
	}
	return results.PrimaryLatency(pt.latency())
}

// sweepLatOf reads latency key of a sweep point: its mean (q 0) or
// quantile q; key "" is the point's sweepLatency.
func sweepLatOf(key string, q float64) func(sweepPoint) (float64, bool) {
	return func(pt sweepPoint) (float64, bool) {
		k := key
		if k == "" {
			k = sweepLatency(pt)
		}
		h := pt.latency()[k]
		if q == 0 {
			if h == nil || h.Count == 0 {
				return 0, false
			}
			return h.Mean, true
		}
		v, ok := latQ(h, q)
		return float64(v), ok
	}
}

// sweepLatencyName names the latency of pts in the table's heads and the
// chart's title ("Delivery", "OK"); "Latency" when the points differ.
func sweepLatencyName(pts []sweepPoint) string {
	name := ""
	for _, pt := range pts {
		switch k := latencyLabel(sweepLatency(pt)); {
		case name == "":
			name = k
		case name != k:
			return "Latency"
		}
	}
	if name == "" {
		return "Latency"
	}
	return strings.ToUpper(name[:1]) + name[1:]
}

// sweepLatencyWords names the latency of pts in a sentence ("delivery
// latency", "OK latency", "latency").
func sweepLatencyWords(pts []sweepPoint) string {
	switch n := sweepLatencyName(pts); n {
	case "Latency":
		return "latency"
	case "Delivery":
		return "delivery latency"
	default:
		return n + " latency"
	}
}

// sweepColumns are the optional columns of a sweep table: a delivery
// sweep's OK latency beside it, the deliveries and the verification,
// each shown when some point has it.
type sweepColumns struct{ ok, deliveries, verification bool }

func sweepColumnsOf(pts []sweepPoint) sweepColumns {
	var c sweepColumns
	for _, pt := range pts {
		c.ok = c.ok || (sweepLatency(pt) == results.LatencyDeliver && pt.latency()[results.LatencyOK] != nil)
		_, d := pt.counts()[results.CountDeliveries]
		c.deliveries = c.deliveries || d
		c.verification = c.verification || (pt.group == nil && pt.p.Verification != nil)
	}
	return c
}

// sweepPointsOf are the sweep points of every run of groups.
func sweepPointsOf(groups []*relayRuns) []sweepPoint {
	var all []sweepPoint
	for _, g := range groups {
		for _, r := range g.runs {
			all = append(all, sweep(r)...)
		}
	}
	return all
}

// sweepTable is narwhal's payload-sweep table, one row per (relay, size).
// Its latency columns say which latency they are: a fan-out sweep's
// delivery latency, with its OK latency in columns of their own.
func sweepTable(groups []*relayRuns) *table {
	all := sweepPointsOf(groups)
	lat, cols := sweepLatencyName(all), sweepColumnsOf(all)
	head := []string{"Relay", "Payload", "Throughput (msg/s)", "Data throughput", lat + " mean", lat + " p50", lat + " p95", lat + " p99"}
	if cols.ok {
		head = append(head, "OK p50", "OK p99")
	}
	head = append(head, "Total messages")
	if cols.deliveries {
		head = append(head, "Deliveries")
	}
	if cols.verification {
		head = append(head, "Verification")
	}
	// Relay and payload are left-aligned text: they name a row, and the
	// columns of the HTML's transpose (fitPage) when the table is wide.
	t := &table{title: "Payload sweep", head: append(head, "Status"), left: map[int]bool{1: true, len(head): true}}
	if cols.verification {
		t.left[len(head)-1] = true
	}
	for _, g := range groups {
		bySize := map[float64][]sweepPoint{}
		var sizes []float64
		for _, r := range g.runs {
			for _, pt := range sweep(r) {
				if bySize[pt.size] == nil {
					sizes = append(sizes, pt.size)
				}
				bySize[pt.size] = append(bySize[pt.size], pt)
			}
		}
		sort.Float64s(sizes)
		for _, sz := range sizes {
			t.add(sweepRow(g.key, sz, bySize[sz], cols)...)
		}
	}
	if len(t.rows) == 0 {
		return nil
	}
	return t
}

// sweepRow is the row of a sweep table for relay key at size sz, from
// its points (one per repeated run).
func sweepRow(key string, sz float64, pts []sweepPoint, cols sweepColumns) []string {
	vals := func(get func(sweepPoint) (float64, bool)) []float64 { return present(pts, get) }
	count := func(v float64) string { return fmtInt(int64(v)) }
	var ps []*results.Phase
	var vs []*results.Verification
	for _, pt := range pts {
		ps = append(ps, pt.p)
		if pt.group == nil && pt.p.Verification != nil {
			vs = append(vs, pt.p.Verification)
		}
	}
	row := []string{key, fmtPayload(sz), agg(vals(sweepRate), fmtRate),
		agg(vals(sweepMB), func(v float64) string { return fmtMiBps(v) + " MiB/s" }),
		agg(vals(sweepLatOf("", 0)), fmtDur), agg(vals(sweepLatOf("", 50)), fmtDur),
		agg(vals(sweepLatOf("", 95)), fmtDur), agg(vals(sweepLatOf("", 99)), fmtDur)}
	if cols.ok {
		row = append(row, agg(vals(sweepLatOf(results.LatencyOK, 50)), fmtDur), agg(vals(sweepLatOf(results.LatencyOK, 99)), fmtDur))
	}
	row = append(row, agg(vals(sweepTotal), count))
	if cols.deliveries {
		row = append(row, agg(vals(func(pt sweepPoint) (float64, bool) {
			v, ok := pt.counts()[results.CountDeliveries]
			return float64(v), ok
		}), count))
	}
	if cols.verification {
		v := aggVerdict(vs)
		if v == "" {
			v = dash
		}
		row = append(row, v)
	}
	return append(row, aggStatus(ps))
}

// checkedUnits are what a phase's verification counts as checked, by
// its kind (singular, plural): a query's answers, a subscription's
// deliveries, a negentropy phase's syncs and its read-back queries.
var checkedUnits = map[string][2]string{
	"query": {"query", "queries"}, "load": {"query", "queries"}, "mixed": {"query", "queries"}, "clients": {"query", "queries"},
	"subscribe": {"subscription", "subscriptions"}, "sweep": {"subscription", "subscriptions"},
	"count": {"COUNT", "COUNTs"}, "search": {"search", "searches"},
	"negentropy": {"sync or read-back", "syncs and read-backs"},
}

// checkedUnit is the unit of phase p's checked answers ("queries",
// "subscriptions"; "answers" for a kind not named), singular for one.
func checkedUnit(p *results.Phase, one bool) string {
	u, ok := checkedUnits[kind(p)]
	if !ok {
		u = [2]string{"answer", "answers"}
	}
	if one {
		return u[0]
	}
	return u[1]
}

// verificationTable has one row per (relay, phase) that was verified.
func verificationTable(groups []*relayRuns) *table {
	t := &table{title: "Verification", head: []string{"Relay", "Phase", "Checked", "Expected", "Returned", "Missing", "Extra", "Not matching", "Invalid", "Duplicated", "Truncated", "Result"},
		left: map[int]bool{1: true, 11: true}}
	type vcol func(v *results.Verification) int64
	cols := []vcol{
		func(v *results.Verification) int64 { return v.Checked },
		func(v *results.Verification) int64 { return v.Expected },
		func(v *results.Verification) int64 { return v.Returned },
		func(v *results.Verification) int64 { return v.Missing },
		func(v *results.Verification) int64 { return v.Extra },
		func(v *results.Verification) int64 { return v.NotMatching },
		func(v *results.Verification) int64 { return v.Invalid },
		func(v *results.Verification) int64 { return v.Duplicated },
		func(v *results.Verification) int64 { return v.Truncated },
	}
	needsModel := map[int]bool{1: true, 3: true, 4: true} // Expected, Missing, Extra: known only against a model
	for _, name := range phaseNames(groups) {
		for _, g := range groups {
			var vers []*results.Verification
			for _, p := range g.phases(name) {
				if p.Verification != nil {
					vers = append(vers, p.Verification)
				}
			}
			if len(vers) == 0 {
				continue
			}
			row := []string{g.key, phaseCell(name)}
			for i, c := range cols {
				var vs []float64
				for _, v := range vers {
					// a partial check (answers checked for validity and
					// filter match, no model of what was owed: -skip-publish,
					// a segment) has every count but Expected, Missing
					// and Extra, as the terminal's Verification line says
					if v.Verified || v.Checked > 0 && !needsModel[i] {
						vs = append(vs, float64(c(v)))
					}
				}
				cell := agg(vs, func(v float64) string { return fmtInt(int64(v)) })
				if i == 0 && len(vs) > 0 { // Checked: its unit differs by phase ("100 queries (90–110)", "10 subscriptions")
					n, spread, _ := strings.Cut(cell, " (")
					cell = n + " " + checkedUnit(g.phases(name)[0], cell == "1")
					if spread != "" {
						cell += " (" + spread
					}
				}
				row = append(row, cell)
			}
			t.add(append(row, aggVerdict(vers))...)
		}
	}
	if len(t.rows) == 0 {
		return nil
	}
	return t
}

// resourceTable has one row per (relay, phase) with resource figures.
func resourceTable(groups []*relayRuns) *table {
	t := &table{title: "Resources", head: []string{"Relay", "Phase", "Relay CPU", "Peak RSS", "Data on disk", "Bytes/stored event", "Client CPU", "Client CPU use", "Status"},
		left: map[int]bool{1: true, 8: true}}
	get := func(f func(p *results.Phase, r *results.Resources) (float64, bool)) func(ps []*results.Phase) []float64 {
		return func(ps []*results.Phase) []float64 {
			return present(ps, func(p *results.Phase) (float64, bool) { return f(p, p.Resources) })
		}
	}
	secs := func(v float64) string { return fmtFloat(v, 2) + " s" }
	for _, name := range phaseNames(groups) {
		for _, g := range groups {
			var ps []*results.Phase
			for _, p := range g.phases(name) {
				if p.Resources != nil {
					ps = append(ps, p)
				}
			}
			if len(ps) == 0 {
				continue
			}
			t.add(g.key, phaseCell(name),
				agg(get(func(_ *results.Phase, r *results.Resources) (float64, bool) {
					return r.RelayCPUSecs, r.RelayCPUSecs > 0
				})(ps), secs),
				agg(get(func(_ *results.Phase, r *results.Resources) (float64, bool) {
					return float64(r.RelayPeakRSS), r.RelayPeakRSS > 0
				})(ps), fmtBytes),
				agg(get(func(_ *results.Phase, r *results.Resources) (float64, bool) {
					return float64(r.RelayDataBytes), r.RelayDataBytes > 0
				})(ps), fmtBytes),
				agg(get(func(p *results.Phase, r *results.Resources) (float64, bool) {
					a := p.Counts[results.CountAccepted]
					return float64(r.RelayDataBytes) / float64(a), r.RelayDataBytes > 0 && a > 0 && kind(p) == "publish"
				})(ps), func(v float64) string { return fmtFloat(v, 0) + " B" }),
				agg(get(func(_ *results.Phase, r *results.Resources) (float64, bool) { return r.ClientCPUSecs, true })(ps), secs),
				agg(get(func(_ *results.Phase, r *results.Resources) (float64, bool) {
					return r.ClientCPUUtil, r.ClientCPUUtil > 0
				})(ps), fmtPct),
				aggStatus(ps))
		}
	}
	if len(t.rows) == 0 {
		return nil
	}
	return t
}

// relayTable lists the relays: URL, software and version (NIP-11), runs.
func relayTable(groups []*relayRuns) *table {
	t := &table{title: "Relays", head: []string{"Relay", "URL", "Software", "Version", "Managed", "Runs"},
		left: map[int]bool{1: true, 2: true, 3: true, 4: true}}
	anySkipped := false
	for _, g := range groups {
		anySkipped = anySkipped || slices.ContainsFunc(g.runs, func(r *results.Run) bool { return r.Skipped != "" })
	}
	if anySkipped { // a column of its own, so that Runs stays a column of numbers
		t.head = append(t.head, "Skipped")
	}
	for _, g := range groups {
		sw, ver := g.relay.Software, g.relay.Version
		if sw == "" {
			sw = dash
		}
		if ver == "" {
			ver = dash
		}
		managed := "no"
		if g.relay.Managed {
			managed = "yes"
		}
		ran := 0
		for _, r := range g.runs {
			if r.Skipped == "" {
				ran++
			}
		}
		row := []string{g.key, g.relay.URL, sw, ver, managed, fmt.Sprint(ran)}
		if anySkipped {
			row = append(row, fmt.Sprint(len(g.runs)-ran))
		}
		t.add(row...)
	}
	return t
}

// tables returns every table for files, in report order: relays, publish,
// query, query shapes, the other phases (and their groups), the payload
// sweep, verification and resources.
func tables(files []*results.File) []*table {
	groups := groupRuns(files)
	var ts []*table
	addT := func(t *table) {
		if t != nil {
			ts = append(ts, t)
		}
	}
	addT(relayTable(groups))
	for _, name := range phaseNames(groups) {
		switch {
		case name == "publish":
			addT(publishTable(groups))
		case name == "query":
			addT(queryTable(groups))
		case isSweepPhase(name):
			continue
		default:
			addT(mixedTable(name, groups)) // mixed.go: nothing for another phase
			addT(genericTable(name, groups))
		}
		if !(name == "sweep") {
			addT(groupTable(name, groups))
		}
	}
	addT(sweepTable(groups))
	addT(authTable(groups))        // NIP-42 (auth.go)
	addT(conformanceTable(groups)) // conformance.go
	addT(verificationTable(groups))
	addT(resourceTable(groups))
	addT(segmentResourceTable(files))
	if repeated(groups) {
		for _, t := range ts {
			if t.title != "Relays" {
				t.notes = append(t.notes, "Repeated runs: each cell is the median, with the spread (min–max) in parentheses.")
			}
		}
	}
	return ts
}
