package report

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/relaybench/relaybench/metrics"
	"github.com/relaybench/relaybench/results"
)

// latQ returns percentile q (0–100) of h in nanoseconds. It uses the summary
// the file holds for the standard percentiles and decodes the embedded HDR
// histogram for any other; ok is false when h holds no values or the
// percentile cannot be had.
func latQ(h *results.Histogram, q float64) (int64, bool) {
	if h == nil || h.Count == 0 {
		return 0, false
	}
	if v, ok := h.Percentiles[metrics.PercentileKey(q)]; ok {
		return v, true
	}
	if q >= 100 {
		return h.Max, true
	}
	d, err := decode(h)
	if err != nil || d.Count() == 0 {
		return 0, false
	}
	return d.Quantile(q), true
}

// decode decodes h's embedded histogram.
func decode(h *results.Histogram) (*metrics.Histogram, error) {
	return metrics.FromResult(h)
}

// latencyLabel names a latency for readers: "ok" → "OK", "eose" → "EOSE",
// "deliver" → "delivery", "op" → "operation".
func latencyLabel(name string) string {
	switch name {
	case results.LatencyOK, results.LatencyEOSE:
		return strings.ToUpper(name)
	case results.LatencyDeliver:
		return "delivery"
	case "op":
		return "operation"
	}
	return humanName(name)
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// kind is what a phase measures, from its workload (or its name when the
// workload is not set): "publish", "query" or another name.
func kind(p *results.Phase) string {
	if p.Workload != "" {
		return p.Workload
	}
	return p.Name
}

// phaseStatus lists what a reader must know before trusting the phase's
// figures: failed or impossible verification, a client-limited measurement,
// errors.
func phaseStatus(p *results.Phase) []string {
	var s []string
	if p.Skipped != "" {
		s = append(s, "skipped") // a workload the relay does not announce (its note says why)
	}
	if st := verStatus(p.Verification); st != "" {
		s = append(s, st)
	}
	for _, g := range p.Groups {
		if v := g.Verification; v != nil && v.Status() == results.VerificationFailed && (p.Verification == nil || p.Verification.Status() != results.VerificationFailed) {
			s = append(s, "verification FAILED ("+g.Name+")")
			break
		}
	}
	if p.ClientLimited {
		s = append(s, "client-limited")
	}
	if len(p.Errors) > 0 {
		s = append(s, fmt.Sprintf("%d error(s)", len(p.Errors)))
	}
	return s
}

// verStatus is what a reader must know about a verification: "not
// verified" (no answer checked), "verification FAILED", "partly verified"
// (validity and filter only: nothing published to compare with), or "".
func verStatus(v *results.Verification) string {
	if v == nil {
		return ""
	}
	switch v.Status() {
	case results.VerificationNotVerified:
		return "not verified"
	case results.VerificationFailed:
		return "verification FAILED"
	}
	if !v.Verified {
		return "partly verified"
	}
	return ""
}

// verdict is "PASSED", "FAILED" or "NOT VERIFIED" (no answer checked) for a
// verification; a pass under a named store semantics says so: "PASSED
// (keeps superseded versions)", and one of validity and filter match alone
// (nothing published to compare with) "PASSED (partial)".
func verdict(v *results.Verification) string {
	if v == nil {
		return dash
	}
	switch v.Status() {
	case results.VerificationNotVerified:
		return "NOT VERIFIED"
	case results.VerificationFailed:
		return "FAILED"
	}
	switch {
	case !v.Verified:
		return "PASSED (partial)"
	case v.Semantics != "":
		return "PASSED (" + v.Semantics + ")"
	}
	return "PASSED"
}

// durNs returns the phase duration in nanoseconds; ok is false when unset.
func durNs(p *results.Phase) (float64, bool) {
	return float64(p.Duration), p.Duration > 0
}

// count returns counter name; ok is false when the file does not hold it,
// or holds a reading under its noise floor (results.BelowNoise).
func count(counts map[string]int64, name string) (float64, bool) {
	v, ok := counts[name]
	return float64(v), ok && !results.BelowNoise(counts, name)
}

// figureCounts is counts without the readings under their noise floor
// (results.BelowNoise: the client memory of too few idle subscriptions),
// which every format leaves out as the phase's note says "not measurable",
// where the results file keeps them; counts itself when it has none.
func figureCounts(counts map[string]int64) map[string]int64 {
	var out map[string]int64
	for k := range counts {
		if results.BelowNoise(counts, k) {
			if out == nil {
				out = maps.Clone(counts)
			}
			delete(out, k)
		}
	}
	if out == nil {
		return counts
	}
	return out
}

// rate returns rate name; ok is false when the file does not hold it.
func rate(rates map[string]float64, name string) (float64, bool) {
	v, ok := rates[name]
	return v, ok
}

// bandwidth is the phase's MiB/s: the "mb_per_sec" rate, or bytes_sent over
// the duration when the rate is absent.
func bandwidth(p *results.Phase) (float64, bool) {
	if v, ok := p.Rates[results.RateMB]; ok {
		return mibps(v), true
	}
	b, ok := p.Counts[results.CountBytesSent]
	if !ok || p.Duration <= 0 {
		return 0, false
	}
	return float64(b) / (1 << 20) / (float64(p.Duration) / 1e9), true
}

// mibps is a rate of the results file's "mb_per_sec" (MB, 10⁶ bytes, per
// second) in MiB per second: the reports give every byte figure in binary
// units (Total Data 14.72 MiB, Bandwidth 7.29 MiB/s), one family.
func mibps(mb float64) float64 { return mb * 1e6 / (1 << 20) }

// shownRate is rate k's value as the reports show it: mb_per_sec in MiB/s
// (mibps), any other as it is.
func shownRate(k string, v float64) float64 {
	if k == results.RateMB {
		return mibps(v)
	}
	return v
}

// shownFmt formats rate k's shown value (shownRate): MiB/s with three
// significant digits, as every table gives them; any other as a rate.
func shownFmt(k string) func(float64) string {
	if k == results.RateMB {
		return fmtMiBps
	}
	return fmtRate
}

// avgPerQuery is events returned per query, from the counters.
func avgPerQuery(counts map[string]int64) (float64, bool) {
	q, ok1 := counts[results.CountQueries]
	e, ok2 := counts[results.CountEventsReturned]
	if !ok1 || !ok2 || q == 0 {
		return 0, false
	}
	return float64(e) / float64(q), true
}

// sweepSize returns the payload size of a group of a phase named "sweep"
// (its name, "1024" or "1024B").
func sweepSize(name string) (float64, bool) {
	v, ok := results.SweepSize(name)
	return float64(v), ok
}

func isSweepPhase(name string) bool { return results.IsSweepPhase(name) }

// median returns the median of vs (vs must not be empty); vs is sorted.
func median(vs []float64) float64 {
	sort.Float64s(vs)
	n := len(vs)
	if n%2 == 1 {
		return vs[n/2]
	}
	return (vs[n/2-1] + vs[n/2]) / 2
}

// minMax returns the smallest and largest of vs.
func minMax(vs []float64) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, v := range vs {
		lo = math.Min(lo, v)
		hi = math.Max(hi, v)
	}
	return lo, hi
}
