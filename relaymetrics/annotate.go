package relaymetrics

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/relaybench/relaybench/internal/mono"
	"github.com/relaybench/relaybench/results"
)

// matchSlack is how far a phase's start may be from its window's (the
// phase's start is the window's, unless a workload moved it).
const matchSlack = int64(50e6)

// Annotate puts the relay's metrics of each phase of run's timed window
// into the phase (AnnotatePhase), and says in a run note when readings
// failed.
func (r *Recorder) Annotate(run *results.Run) {
	for i := range run.Phases {
		r.AnnotatePhase(&run.Phases[i])
	}
	r.mu.Lock()
	scrapes, failed, lastErr, gaveUp := r.scrapes, r.failed, r.lastErr, r.inARow >= maxFailuresInARow
	r.mu.Unlock()
	if failed > 0 {
		again := ""
		if gaveUp {
			again = fmt.Sprintf("; after %d in a row, not read again", maxFailuresInARow)
		}
		run.Notes = append(run.Notes, fmt.Sprintf("relay metrics: %d of %d readings of %s failed (those phases have none%s), the last: %s", failed, scrapes, r.url, again, lastErr))
	}
}

// AnnotatePhase puts the relay's metrics of ph's timed window into ph
// (RelayMetrics), with the checks of its counts against relaybench's
// (RelayChecks) and notes naming them. A phase already annotated, or
// without a window read, is left alone: a live view annotates a copy of
// each phase as it ends, the results file the run's phases at its end.
func (r *Recorder) AnnotatePhase(ph *results.Phase) {
	if ph.RelayMetrics != nil {
		return
	}
	r.mu.Lock()
	w, ok := windowOf(r.windows, mono.FromTime(ph.Start))
	r.mu.Unlock()
	if !ok || w.err != "" {
		return
	}
	ph.RelayMetrics = maps.Clone(w.delta)
	if w.reset != "" {
		ph.Notes = append(ph.Notes, w.reset)
	}
	ph.RelayChecks = Checks(ph)
	ph.Notes = append(ph.Notes, notes(ph)...)
}

// windowOf is the window starting at start (within matchSlack).
func windowOf(ws []window, start int64) (window, bool) {
	best, found := window{}, false
	for _, w := range ws {
		d := w.start - start
		if d < 0 {
			d = -d
		}
		if d <= matchSlack && (!found || d < abs(best.start-start)) {
			best, found = w, true
		}
	}
	return best, found
}

func abs(d int64) int64 {
	if d < 0 {
		return -d
	}
	return d
}

// deltas is what the relay's series say of the window: a counter's (and
// a histogram's or summary's _count and _sum) increase, a gauge's value
// at the end; buckets and quantiles are left out, as are series that did
// not move (but for those a check compares: a count of none is checked
// too), values that are not finite numbers (NaN, ±Inf: no JSON number),
// series named longer than maxKeyLen, and counters that went down (the
// relay restarted them: their increase is unknown), which are returned;
// at most maxKept, by name.
func deltas(before, after Scrape) (map[string]float64, []string) {
	out := map[string]float64{}
	var resets []string
	for _, k := range slices.Sorted(maps.Keys(after.Values)) {
		if len(out) >= maxKept {
			break
		}
		base, _, _ := strings.Cut(k, "{")
		_, typ := after.family(k)
		if strings.HasSuffix(base, "_bucket") || strings.Contains(k, "quantile=") || len(k) > maxKeyLen {
			continue
		}
		v := after.Values[k]
		if typ != "gauge" {
			b := before.Values[k]
			if v < b {
				resets = append(resets, k)
				continue
			}
			v -= b
		}
		if (v != 0 || checkOf(k).series != "") && !math.IsNaN(v) && !math.IsInf(v, 0) {
			out[k] = v
		}
	}
	if len(out) == 0 {
		return nil, resets
	}
	return out, resets
}

// resetNote names the counters that went down over a window (at most 5).
func resetNote(keys []string) string {
	more := ""
	if len(keys) > 5 {
		keys, more = keys[:5], fmt.Sprintf(" and %d more", len(keys)-5)
	}
	return fmt.Sprintf("relay metrics: %s%s went down over the window (the relay restarted the count): left out, not compared", strings.Join(keys, ", "), more)
}

// bounds is what relaybench knows of a count the relay also keeps: at
// least lo (what it saw done) and at most hi (what it sent).
type bounds struct{ lo, hi int64 }

// opBounds sums ph's accounts of ops: accepted (lo) and requested minus
// not run (hi: what may have reached the relay).
func opBounds(ph *results.Phase, ops ...string) (bounds, bool) {
	var b bounds
	found := false
	for _, a := range ph.Accounts {
		for _, op := range ops {
			if a.Op == op {
				b.lo += a.Accepted
				b.hi += a.Requested - a.NotRun
				found = true
			}
		}
	}
	return b, found
}

// check is one of the relay's counts relaybench can bound.
type check struct {
	series string // the relay's series (nostr-rs-relay's and Wisp's names)
	what   string // what the relay counts
	ours   string // what bounds it, in relaybench's words
	ops    []string
	over   *overCount // how a relay is known to count the series more than once, or nil
	// newOnly: the relay counts only new events, not an accepted
	// duplicate, which relaybench books as accepted like any other: the
	// least it knows the relay counted is none.
	newOnly bool
}

// overCount is a relay's known over-count of a series, read in its
// source: each message relaybench sent counted times over, plus the
// relay's own count of other messages (plus, a series of the same
// window) counted there once each.
type overCount struct {
	times int64
	plus  string // "": none
	why   string // the relay's code that does it
}

// eventTwice: nostr-rs-relay 0.8.9 … 0.8.13 (the catalog's is 0.8.12)
// increments nostr_cmd_event_total for every EVENT or AUTH message before
// it parses it, then again for an EVENT found valid or invalid; 0.9.0
// dropped the first (commit 388eadf, "feat: limit_scrapers").
var eventTwice = &overCount{times: 2, plus: "nostr_cmd_auth_total",
	why: "nostr-rs-relay 0.8.9 … 0.8.13 counts every EVENT message twice, once on arrival before parsing (src/server.rs:1266 in 0.8.12) and again as a valid event (:1269) or an invalid one (:1330), and every AUTH message once (:1266, and in nostr_cmd_auth_total at :1299); 0.9.0 counts an EVENT once (commit 388eadf)"}

var checks = []check{
	// nostr-rs-relay 0.8.12 times a duplicate's write too (src/db.rs:405,
	// src/repo/sqlite.rs:316; then OK "duplicate:"): every accepted EVENT
	// is written.
	{"nostr_events_write_seconds_count", "events written", "accepted (OK true) … sent", []string{results.OpEvent}, nil, false},
	{"nostr_cmd_event_total", "EVENT messages received", "accepted (OK true) … sent", []string{results.OpEvent}, eventTwice, false},
	{"nostr_cmd_req_total", "REQ messages received", "answered … sent", []string{results.OpQuery, results.OpRead, results.OpSub}, nil, false},
	// Wisp 0.6.1 (src/relay_metrics.zig) counts an event it stored, not a
	// duplicate it answers OK true (src/handler.zig:423, src/writer.zig:184).
	{"wisp_events_stored_total", "events stored", "none (an accepted duplicate is not stored again, and relaybench does not count duplicates apart) … sent", []string{results.OpEvent}, nil, true},
	{"wisp_req_total", "REQ messages received", "answered … sent", []string{results.OpQuery, results.OpRead, results.OpSub}, nil, false},
}

// timing is one of the relay's latency histograms beside relaybench's.
type timing struct {
	family, what, latency, ours string
}

var timings = []timing{
	{"nostr_query_seconds", "mean subscription response time", results.LatencyEOSE, "REQ→EOSE"},
	{"nostr_events_write_seconds", "mean event write time", results.LatencyOK, "EVENT→OK"},
}

// Checks are the relay's counts in ph.RelayMetrics that relaybench can
// bound (checks), each against its bounds.
func Checks(ph *results.Phase) []results.RelayCheck {
	var out []results.RelayCheck
	for _, c := range checks {
		v, ok := ph.RelayMetrics[c.series]
		b, have := opBounds(ph, c.ops...)
		if !ok || !have {
			continue
		}
		if c.newOnly {
			b.lo = 0
		}
		out = append(out, results.RelayCheck{Series: c.series, What: c.what, Relay: v, Low: b.lo, High: b.hi,
			Disagree: int64(v) < b.lo || int64(v) > b.hi})
	}
	return out
}

// checkOf is the check of a series (the zero check if none).
func checkOf(series string) check {
	for _, c := range checks {
		if c.series == series {
			return c
		}
	}
	return check{}
}

// notes name the relay's figures beside relaybench's: each check (outside
// the bounds, the two disagree), each latency beside relaybench's.
func notes(ph *results.Phase) []string {
	var out []string
	for _, c := range ph.RelayChecks {
		out = append(out, CheckNote(c, ph.RelayMetrics))
	}
	m := ph.RelayMetrics
	for _, tm := range timings {
		cnt, sum := m[tm.family+"_count"], m[tm.family+"_sum"]
		h := ph.Latency[tm.latency]
		if cnt <= 0 || h == nil || h.Count == 0 {
			continue
		}
		out = append(out, fmt.Sprintf("relay metrics: %s %.3f ms over %d (%s), relaybench's mean %s %.3f ms over %d", tm.what, sum/cnt*1e3, int64(cnt), tm.family, tm.ours, h.Mean/1e6, h.Count))
	}
	return out
}

// CheckNote says a check in one line: the relay's count beside
// relaybench's bounds, and whether they disagree. m is the relay's
// metrics of the same window: a count a relay is known to inflate
// (overCount) is said to be its finding when m and the bounds account for
// it exactly.
func CheckNote(c results.RelayCheck, m map[string]float64) string {
	n := int64(c.Relay)
	count := fmt.Sprintf("%d", n)
	if c.RelayMax > 0 {
		count = fmt.Sprintf("%d … %d (merged segments whose windows overlap)", n, int64(c.RelayMax))
	}
	chk := checkOf(c.Series)
	if !c.Disagree {
		return fmt.Sprintf("relay metrics: %s %s (%s), within relaybench's %d … %d (%s)", count, c.What, c.Series, c.Low, c.High, chk.ours)
	}
	if f := overNote(c, chk, m); f != "" {
		return fmt.Sprintf("relay metrics disagree: the relay counted %s %s (%s), %s; a relay finding, not an error of the run: %s", count, c.What, c.Series, f, chk.over.why)
	}
	times := ""
	if c.RelayMax == 0 && c.High > 0 && n > c.High && n%c.High == 0 {
		times = fmt.Sprintf(", %d times what relaybench sent", n/c.High)
	}
	return fmt.Sprintf("relay metrics disagree: the relay counted %s %s (%s%s), relaybench %d … %d (%s); other clients of the relay would count there too", count, c.What, c.Series, times, c.Low, c.High, chk.ours)
}

// overNote says how c's count is what the relay's known over-count of
// relaybench's bounds gives (its times, plus the relay's own count of the
// plus series in m), or "" when it is not: then the two simply disagree.
func overNote(c results.RelayCheck, chk check, m map[string]float64) string {
	o := chk.over
	if o == nil {
		return ""
	}
	plus := int64(m[o.plus])
	lo, hi := o.times*c.Low+plus, o.times*c.High+plus
	most := c.Relay
	if c.RelayMax > 0 {
		most = c.RelayMax
	}
	if int64(most) < lo || int64(c.Relay) > hi {
		return ""
	}
	and := ""
	if plus > 0 {
		and = fmt.Sprintf(" plus the relay's %d (%s)", plus, o.plus)
	}
	return fmt.Sprintf("%d times relaybench's %d … %d (%s)%s", o.times, c.Low, c.High, chk.ours, and)
}
