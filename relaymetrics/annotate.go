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
// into the phase (RelayMetrics) with notes comparing them with what
// relaybench measured, and says in a run note when readings failed.
func (r *Recorder) Annotate(run *results.Run) {
	r.mu.Lock()
	ws := append([]window(nil), r.windows...)
	scrapes, failed, lastErr, gaveUp := r.scrapes, r.failed, r.lastErr, r.inARow >= maxFailuresInARow
	r.mu.Unlock()
	for i := range run.Phases {
		ph := &run.Phases[i]
		w, ok := windowOf(ws, mono.FromTime(ph.Start))
		if !ok || w.err != "" {
			continue
		}
		ph.RelayMetrics = maps.Clone(w.delta)
		if w.reset != "" {
			ph.Notes = append(ph.Notes, w.reset)
		}
		ph.Notes = append(ph.Notes, compare(ph)...)
	}
	if failed > 0 {
		again := ""
		if gaveUp {
			again = fmt.Sprintf("; after %d in a row, not read again", maxFailuresInARow)
		}
		run.Notes = append(run.Notes, fmt.Sprintf("relay metrics: %d of %d readings of %s failed (those phases have none%s), the last: %s", failed, scrapes, r.url, again, lastErr))
	}
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
// not move, values that are not finite numbers (NaN, ±Inf: no JSON
// number), series named longer than maxKeyLen, and counters that went
// down (the relay restarted them: their increase is unknown), which are
// returned; at most maxKept, by name.
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
		if v != 0 && !math.IsNaN(v) && !math.IsInf(v, 0) {
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
	series string // the relay's series (nostr-rs-relay's names)
	what   string // what the relay counts
	ours   string // what bounds it, in relaybench's words
	ops    []string
}

var checks = []check{
	{"nostr_events_write_seconds_count", "events written", "accepted (OK true) … sent", []string{results.OpEvent}},
	{"nostr_cmd_event_total", "EVENT messages received", "accepted (OK true) … sent", []string{results.OpEvent}},
	{"nostr_cmd_req_total", "REQ messages received", "answered … sent", []string{results.OpQuery, results.OpRead, results.OpSub}},
}

// timing is one of the relay's latency histograms beside relaybench's.
type timing struct {
	family, what, latency, ours string
}

var timings = []timing{
	{"nostr_query_seconds", "mean subscription response time", results.LatencyEOSE, "REQ→EOSE"},
	{"nostr_events_write_seconds", "mean event write time", results.LatencyOK, "EVENT→OK"},
}

// compare names the relay's figures beside relaybench's: each count it
// keeps against what relaybench can bound it by (outside the bounds, the
// two disagree), each latency beside relaybench's.
func compare(ph *results.Phase) []string {
	var notes []string
	m := ph.RelayMetrics
	for _, c := range checks {
		v, ok := m[c.series]
		b, have := opBounds(ph, c.ops...)
		if !ok || !have {
			continue
		}
		n := int64(v)
		if n < b.lo || n > b.hi {
			times := ""
			if b.hi > 0 && n > b.hi && n%b.hi == 0 {
				times = fmt.Sprintf(", %d times what relaybench sent", n/b.hi)
			}
			notes = append(notes, fmt.Sprintf("relay metrics disagree: the relay counted %d %s (%s%s), relaybench %d … %d (%s); other clients of the relay would count there too", n, c.what, c.series, times, b.lo, b.hi, c.ours))
		} else {
			notes = append(notes, fmt.Sprintf("relay metrics: %d %s (%s), within relaybench's %d … %d (%s)", n, c.what, c.series, b.lo, b.hi, c.ours))
		}
	}
	for _, tm := range timings {
		cnt, sum := m[tm.family+"_count"], m[tm.family+"_sum"]
		h := ph.Latency[tm.latency]
		if cnt <= 0 || h == nil || h.Count == 0 {
			continue
		}
		notes = append(notes, fmt.Sprintf("relay metrics: %s %.3f ms over %d (%s), relaybench's mean %s %.3f ms over %d", tm.what, sum/cnt*1e3, int64(cnt), tm.family, tm.ours, h.Mean/1e6, h.Count))
	}
	return notes
}
