package report

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"strings"

	"github.com/relaybench/relaybench/internal/numfmt"
	"github.com/relaybench/relaybench/internal/sysinfo"
	"github.com/relaybench/relaybench/results"
)

// keptShare is the share of its throughput alone a side of a mixed run
// must keep together for the summary to say it kept it: an open-loop side
// that keeps up runs at its schedule in both parts, give or take timer
// jitter.
const keptShare = 0.95

// mixedSide is one side of a mixed run: its throughput and p99 latency
// alone and together, and their ratios (together / alone).
type mixedSide struct {
	name, verb, unit, lat string // "publish", "publishing", "events/s", "OK"
	key                   string // its latency's key: results.LatencyOK, results.LatencyEOSE
	alone, together       float64
	ratio                 float64 // together / alone; 0: unknown
	p99Alone, p99Together int64
	p99Ratio              float64
	doubt                 string // why the alone p99 is no fair baseline ("": none known; mixedbaseline.go)
	// noise: the two p99s' 95% intervals overlap (p99Apart): the ratio is
	// no change either way
	noise bool
}

// p99Apart reports whether the p99s of two latency histograms differ by
// more than sampling noise: their 95% intervals, by order statistics,
// do not overlap. ok is false when either histogram is missing or empty
// (then nothing is judged). Walks read "EOSE p99 0.98× (faster together)"
// on a quiet machine from 250 REQs a part: a p99 read from the three
// slowest.
func p99Apart(a, b *results.Histogram) (apart, ok bool) { return quantileApart(a, b, 99) }

// quantileApart reports whether the q-th percentiles of two latency
// histograms differ by more than sampling noise. The q-th percentile of n
// values is the value of rank q/100·n, and that rank varies between
// samples of the same distribution by sqrt(n·p·(1-p)) (p = q/100); the
// interval runs between the values 1.96 of those away on either side
// (capped at the maximum).
func quantileApart(a, b *results.Histogram, q float64) (apart, ok bool) {
	p := q / 100
	interval := func(h *results.Histogram) (lo, hi int64, ok bool) {
		if h == nil || h.Count <= 0 {
			return 0, 0, false
		}
		d := 100 * 1.96 * math.Sqrt(p*(1-p)/float64(h.Count))
		lo, okLo := latQ(h, max(0, q-d))
		hi, okHi := latQ(h, min(100, q+d))
		return lo, hi, okLo && okHi
	}
	aLo, aHi, okA := interval(a)
	bLo, bHi, okB := interval(b)
	if !okA || !okB {
		return false, false
	}
	return bHi < aLo || bLo > aHi, true
}

// tailOnly is why side s's p99 lower together than alone is only the alone
// part's tail ("" when it is not, or the figures are not there): its p90s
// alone and together are within each other's noise, so the gap is a few
// slow operations alone (cold caches, one stall, a wake-up), not a relay
// answering faster under load. A walk against a relay filled by earlier
// runs read "EOSE p99 0.47× (faster together)" three runs of five: 4 or 5
// of query/alone's 100 REQs took 5.1-10.8 ms, none together over 5.3 ms.
func tailOnly(p *results.Phase, s mixedSide) string {
	a, t := p.Latency[s.key+"_alone"], p.Latency[s.key]
	apart, ok := quantileApart(a, t, 90)
	if !ok || apart {
		return ""
	}
	pa, _ := latQ(a, 90)
	pt, _ := latQ(t, 90)
	ops := "events"
	if s.name == "query" {
		ops = "REQs"
	}
	return fmt.Sprintf("%s/alone's %s p90 (%s) and together's (%s) are within each other's noise: the p99 gap is a few slow %s alone (cold caches, a stall, a wake-up), not a relay answering faster under load",
		s.name, s.lat, fmtDur(float64(pa)), fmtDur(float64(pt)), ops)
}

// mixedSpecs name each side's figures in a mixed phase: its rate (alone:
// with "_alone"), throughput ratio and latency.
var mixedSpecs = []struct{ name, verb, unit, rate, ratio, lat string }{
	{"publish", "publishing", "events/s", results.RateEvents, "publish_throughput_ratio", results.LatencyOK},
	{"query", "querying", "queries/s", results.RateQueries, "query_throughput_ratio", results.LatencyEOSE},
}

// mixedSides reads the two sides of a mixed phase; nil when p is not a
// mixed phase or holds no ratio (a part did not run).
func mixedSides(p *results.Phase) []mixedSide {
	if p.Workload != "mixed" {
		return nil
	}
	var out []mixedSide
	for _, s := range mixedSpecs {
		r, ok := p.Rates[s.ratio]
		if !ok || r <= 0 {
			continue
		}
		m := mixedSide{name: s.name, verb: s.verb, unit: s.unit, lat: latencyLabel(s.lat), key: s.lat,
			alone: p.Rates[s.rate+"_alone"], together: p.Rates[s.rate], ratio: r, p99Ratio: p.Rates[s.lat+"_p99_ratio"]}
		m.p99Alone, _ = latQ(p.Latency[s.lat+"_alone"], 99)
		m.p99Together, _ = latQ(p.Latency[s.lat], 99)
		m.doubt = baselineDoubt(p, s.name)
		if apart, ok := p99Apart(p.Latency[s.lat+"_alone"], p.Latency[s.lat]); ok && !apart {
			m.noise = true
		}
		if m.doubt == "" && m.p99Ratio > 0 && m.p99Ratio < 1 {
			m.doubt = tailOnly(p, m)
		}
		out = append(out, m)
	}
	return out
}

// mixedShown are the figures of a mixed phase its together-vs-alone block
// shows, which the brief summary does not list again.
var mixedShown = map[string]bool{"events_per_sec": true, "events_per_sec_alone": true, "queries_per_sec": true,
	"queries_per_sec_alone": true, "publish_throughput_ratio": true, "query_throughput_ratio": true,
	"ok_p50_ratio": true, "ok_p99_ratio": true, "eose_p50_ratio": true, "eose_p99_ratio": true}

// mixedFigure reports whether figure k of p is one its together-vs-alone
// block or table shows.
func mixedFigure(p *results.Phase, k string) bool { return mixedShown[k] && len(mixedSides(p)) > 0 }

// mixedTable is the together-vs-alone table of the phases called name
// that are mixed phases: per relay and side, its throughput and p99
// latency alone and together, and their ratios (medians over repeated
// runs); nil when none is.
func mixedTable(name string, groups []*relayRuns) *table {
	t := &table{title: title(name) + ": together vs alone", left: map[int]bool{1: true, 5: true},
		head: []string{"Relay", "Side", "Throughput alone", "Throughput together", "Ratio", "Latency", "p99 alone", "p99 together", "p99 ratio"}}
	rateOf := func(k string) func(*results.Phase) (float64, bool) {
		return func(p *results.Phase) (float64, bool) { return rate(p.Rates, k) }
	}
	p99Of := func(k string) func(*results.Phase) (float64, bool) {
		return func(p *results.Phase) (float64, bool) {
			v, ok := latQ(p.Latency[k], 99)
			return float64(v), ok
		}
	}
	for _, g := range groups {
		ps := slices.DeleteFunc(g.phases(name), func(p *results.Phase) bool { return len(mixedSides(p)) == 0 })
		if len(ps) == 0 {
			continue
		}
		doubts := mixedTableNotes(g.key, ps)
		for _, s := range mixedSpecs {
			unit := func(v float64) string { return fmtRate(v) + " " + s.unit }
			t.add(g.key, s.name, agg(present(ps, rateOf(s.rate+"_alone")), unit), agg(present(ps, rateOf(s.rate)), unit),
				agg(present(ps, rateOf(s.ratio)), fmtTimes), latencyLabel(s.lat),
				agg(present(ps, p99Of(s.lat+"_alone")), fmtDur), agg(present(ps, p99Of(s.lat)), fmtDur),
				agg(present(ps, rateOf(s.lat+"_p99_ratio")), fmtTimes)+doubts.cell[s.name])
		}
		t.notes = append(t.notes, doubts.notes...)
	}
	if len(t.rows) == 0 {
		return nil
	}
	return t
}

// isMixedRatioNote reports whether note n is one of a mixed phase's
// ratio notes ("ok p99 ratio together/alone: 3.47× (…)"), which the brief
// summary leaves to -v once the together-vs-alone block showed them.
func isMixedRatioNote(n string) bool { return strings.Contains(n, " ratio together/alone: ") }

// writeMixed writes a mixed phase's verdict, each side's throughput and
// p99 latency alone and together, one line per side:
//
//	Together vs alone: OK p99 3.47× slower together; both sides kept their throughput
//	  side     throughput alone → together  p99 alone → together
//	  publish  200 → 200 events/s (1.00×)    OK 2.48ms → 8.60ms (3.47×)
func writeMixed(w io.Writer, p *results.Phase) {
	sides := mixedSides(p)
	if len(sides) == 0 {
		return
	}
	kv(w, "Together vs alone", mixedVerdict(sides)+mixedCaveat(p, sides))
	t := &table{head: []string{"side", "throughput alone → together", "p99 alone → together"}, left: map[int]bool{1: true, 2: true}}
	for _, s := range sides {
		thr := fmt.Sprintf("%s → %s %s (%s)", fmtRate(s.alone), fmtRate(s.together), s.unit, fmtTimes(s.ratio))
		lat := dash
		if s.p99Alone > 0 && s.p99Together > 0 {
			lat = fmt.Sprintf("%s %s → %s (%s)", s.lat, fmtDur(float64(s.p99Alone)), fmtDur(float64(s.p99Together)), fmtTimes(s.p99Ratio)+noFinding(s))
		}
		t.add(s.name, thr, lat)
	}
	t.text(w, "    ")
}

// mixedVerdict is a mixed run's judgement in one line, the side that got
// worse first: each slowdown (a side's throughput below keptShare of it
// alone, a p99 latency above it alone), the largest first; then the sides
// that kept their throughput; then a p99 that was faster together. A
// speed-up never hides a slowdown, and one against an alone baseline the
// client could not keep (mixedSide.doubt) is said last, as no finding:
//
//	EOSE p99 3.38× slower together; both sides kept their throughput; OK p99 0.24× (faster together)
func mixedVerdict(sides []mixedSide) string {
	type change struct {
		by   float64 // how many times worse (or better)
		text string
	}
	var worse, better []change
	var kept, doubted, same []string
	for _, s := range sides {
		if s.ratio >= keptShare {
			kept = append(kept, s.verb)
		} else {
			worse = append(worse, change{1 / s.ratio, fmt.Sprintf("%s fell to %s of its throughput alone", s.verb, fmtPct(s.ratio))})
		}
		switch r := s.p99Ratio; {
		case r <= 0 || fmtTimes(r) == fmtTimes(1): // unknown, or unchanged at this precision
		case s.noise:
			same = append(same, fmt.Sprintf("%s p99 %s (within noise)", s.lat, fmtTimes(r)))
		case r > 1:
			worse = append(worse, change{r, fmt.Sprintf("%s p99 %s slower together", s.lat, fmtTimes(r))})
		case s.doubt != "": // faster together against a baseline the client could not keep
			doubted = append(doubted, notAFinding(s))
		default:
			better = append(better, change{1 / r, fmt.Sprintf("%s p99 %s (faster together)", s.lat, fmtTimes(r))})
		}
	}
	largest := func(a, b change) int { return cmp.Compare(b.by, a.by) }
	slices.SortStableFunc(worse, largest)
	slices.SortStableFunc(better, largest)
	var parts []string
	for _, c := range worse {
		parts = append(parts, c.text)
	}
	switch {
	case len(kept) == 2:
		parts = append(parts, "both sides kept their throughput")
	case len(kept) == 1:
		parts = append(parts, kept[0]+" kept its throughput")
	}
	for _, c := range better {
		parts = append(parts, c.text)
	}
	parts = append(parts, same...)
	return strings.Join(append(parts, doubted...), "; ")
}

// loadAverageRE reads the load average of sysinfo.OthersBusy's clause
// ("the machine's 1-minute load average was 7.7 on 2 cores: …").
var loadAverageRE = regexp.MustCompile(`1-minute load average was ([0-9.]+) on ([0-9]+) cores`)

// oneSecondNote is the note of a mixed phase that says the alone part's
// OK p99 came from one of its seconds (the first: the preload's tail or
// the part's own warm-up; a later one: a stall), or "".
func oneSecondNote(p *results.Phase) string {
	i := slices.IndexFunc(p.Notes, func(n string) bool { return strings.Contains(n, results.NoteOneSecond) })
	if i < 0 {
		return ""
	}
	return p.Notes[i]
}

// mixedCaveat is what the together-vs-alone headline adds when its ratios
// are not the relay's alone: " (busy machine: load average 7.7 on 2
// cores)" when the phase's notes judged other processes competed for the
// cores, " (the alone OK p99 is its first second's, …)" when a note says
// the alone part's p99 came from one second, whatever the ratio (it
// compares with a baseline that second inflated, either way; below 1 the
// OK ratio is said to be no finding, with the reason, in its place); ""
// otherwise.
func mixedCaveat(p *results.Phase, sides []mixedSide) string {
	var cs []string
	for _, n := range p.Notes {
		if m := loadAverageRE.FindStringSubmatch(n); m != nil && strings.Contains(n, sysinfo.OthersCompeted) {
			cs = append(cs, "busy machine: load average "+m[1]+" on "+m[2]+" cores")
			break
		}
	}
	doubted := slices.ContainsFunc(sides, func(s mixedSide) bool { return s.name == "publish" && notAFindingShown(s) })
	if n := oneSecondNote(p); n != "" && !doubted {
		which := "one second's"
		if strings.Contains(n, "in the part's first second") {
			which = "its first second's"
		}
		cs = append(cs, "the alone OK p99 is "+which+": the notes give the fairer baseline")
	}
	if len(cs) == 0 {
		return ""
	}
	return " (" + strings.Join(cs, "; ") + ")"
}

// fmtTimes formats a ratio as "1.00×" (three significant digits below
// 0.1: "0.00448×", never "0.00×").
func fmtTimes(r float64) string {
	if r <= 0 || math.IsNaN(r) || math.IsInf(r, 0) {
		return dash
	}
	return numfmt.Ratio(r) + "×"
}
