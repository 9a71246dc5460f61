package live

import (
	"fmt"
	"strings"

	"github.com/relaybench/relaybench/metrics"
	"github.com/relaybench/relaybench/outcome"
	"github.com/relaybench/relaybench/results"
)

// bucketBounds are the classic histogram buckets /metrics exposes, in
// seconds (le), +Inf implied: from 100 µs, where a loopback relay answers,
// to a minute, past every default timeout.
var bucketBounds = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}

// classic is a latency distribution in bucketBounds: Counts[i] values at
// or below bucketBounds[i] (cumulative), Count in all, Sum in seconds.
type classic struct {
	Counts []int64
	Count  int64
	Sum    float64
}

// toClassic re-buckets an HDR histogram: each HDR bar (values equivalent
// at the histogram's precision) falls in the first bucket whose bound is
// at or above the bar's lowest value.
func toClassic(h *metrics.Histogram) classic {
	c := classic{Counts: make([]int64, len(bucketBounds)), Count: h.Count()}
	c.Sum = h.Mean() * float64(c.Count) / 1e9
	for _, b := range h.Buckets() {
		v := float64(b.From) / 1e9
		for i, le := range bucketBounds {
			if v <= le {
				c.Counts[i] += b.Count
			}
		}
	}
	return c
}

// phaseFigures is a finished phase's exact figures, from the results file.
type phaseFigures struct {
	relay    string // "" for the State's relay
	name     string
	accounts []results.Account
	latency  map[string]classic
	ver      *results.Verification
	checks   []results.RelayCheck // the relay's own counts beside relaybench's
	relayNts []string             // the notes that say them, and the relay's timings
}

// figuresOf reads ph's figures: its accounts, its latency histograms
// decoded from the HDR encoding the report reads, its verification.
func figuresOf(ph *results.Phase) phaseFigures {
	f := phaseFigures{name: ph.Name, accounts: ph.Accounts, latency: map[string]classic{}, ver: ph.Verification,
		checks: ph.RelayChecks, relayNts: relayNotes(ph.Notes)}
	for name, lh := range ph.Latency {
		h, err := metrics.FromResult(lh)
		if err != nil || h.Count() == 0 {
			continue
		}
		f.latency[name] = toClassic(h)
	}
	return f
}

// totals is the phase's operations by outcome and requested.
func (f phaseFigures) totals() (map[string]int64, int64) {
	m := make(map[string]int64, len(outcomeNames))
	var req int64
	for _, a := range f.accounts {
		for i, n := range accountCounts(a) {
			m[outcomeNames[i]] += n
		}
		req += a.Requested
	}
	return m, req
}

// byOp splits the phase's operations by kind, in the accounts' order (one
// entry per op, accounts of one op summed), when there is more than one
// kind; nil otherwise.
func (f phaseFigures) byOp() []OpFigures {
	var out []OpFigures
	at := map[string]int{}
	for _, a := range f.accounts {
		i, ok := at[a.Op]
		if !ok {
			i = len(out)
			at[a.Op] = i
			out = append(out, OpFigures{Op: a.Op, Outcomes: make(map[string]int64, len(outcomeNames))})
		}
		for j, n := range accountCounts(a) {
			out[i].Outcomes[outcomeNames[j]] += n
		}
		out[i].Requested += a.Requested
	}
	if len(out) < 2 {
		return nil
	}
	for i := range out {
		out[i].Op = outcome.Noun(out[i].Op, 2)
	}
	return out
}

// accountCounts is a's counts in the order of outcomeNames.
func accountCounts(a results.Account) []int64 {
	return []int64{a.Accepted, a.Refused, a.TimedOut, a.ConnLost, a.NotRun, a.Cancelled}
}

func (f phaseFigures) summary() PhaseSummary {
	m, req := f.totals()
	p := PhaseSummary{Name: f.name, Relay: f.relay, Outcomes: m, Requested: req, Ops: f.byOp(), RelayChecks: f.checks, RelayNotes: f.relayNts}
	if f.ver != nil {
		p.Verification = f.ver.Status()
	}
	return p
}

// failureLine says what a failed verification found.
func failureLine(phase string, v *results.Verification) string {
	faults := v.FaultCounts()
	if faults == "" {
		faults = "failed"
	}
	return fmt.Sprintf("%s: %s (of %d answers checked)", phase, faults, v.Checked)
}

// relayNotes are a phase's notes on the relay's own metrics (at most 20).
func relayNotes(notes []string) []string {
	var out []string
	for _, n := range notes {
		if strings.HasPrefix(n, "relay metrics") && len(out) < 20 {
			out = append(out, n)
		}
	}
	return out
}
