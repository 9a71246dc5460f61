package relaymetrics

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/relaybench/relaybench/results"
)

// Merge puts the relay's metrics of a test's segments (phs, one phase per
// segment, all against one relay) into out, their merged phase: each
// segment's own into out.PerSegment, and the phase's. Segments' windows
// that overlap each read the relay's counts of the others too, so over
// the merged window the relay counted at least the largest segment's
// count and at most their sum: the phase keeps the largest, and a check
// disagrees only when that whole range lies outside relaybench's bounds.
// Segments one after another read disjoint windows: their counts add up
// exactly. A gauge (a series not named as a counter) keeps the value read
// at the end of the last window.
func Merge(out *results.Phase, phs []*results.Phase) {
	read := 0
	for i, p := range phs {
		if p.RelayMetrics == nil {
			continue
		}
		read++
		for j := range out.PerSegment {
			if out.PerSegment[j].Segment == i {
				out.PerSegment[j].RelayMetrics = maps.Clone(p.RelayMetrics)
			}
		}
	}
	if read == 0 {
		return
	}
	overlap := overlapping(phs)
	most, sum, last := map[string]float64{}, map[string]float64{}, lastWindow(phs)
	for _, p := range phs {
		for k, v := range p.RelayMetrics {
			most[k], sum[k] = max(most[k], v), sum[k]+v
		}
	}
	out.RelayMetrics = map[string]float64{}
	for k := range most {
		switch {
		case !counterName(k):
			if v, ok := last.RelayMetrics[k]; ok {
				out.RelayMetrics[k] = v
			}
		case overlap:
			out.RelayMetrics[k] = most[k]
		default:
			out.RelayMetrics[k] = sum[k]
		}
	}
	out.RelayChecks = mergedChecks(out, overlap, sum)
	out.Notes = append(out.Notes, mergeNote(read, len(phs), overlap))
	for _, c := range out.RelayChecks {
		out.Notes = append(out.Notes, CheckNote(c, out.RelayMetrics))
	}
}

// mergedChecks checks the merged counts: with overlapping windows the
// relay's count is a range (the largest segment's … their sum), and
// disagrees only when the range misses relaybench's bounds.
func mergedChecks(out *results.Phase, overlap bool, sum map[string]float64) []results.RelayCheck {
	cs := Checks(out)
	if !overlap {
		return cs
	}
	for i := range cs {
		c := &cs[i]
		if s := sum[c.Series]; s > c.Relay {
			c.RelayMax = s
		}
		hi := c.Relay
		if c.RelayMax > 0 {
			hi = c.RelayMax
		}
		c.Disagree = int64(hi) < c.Low || int64(c.Relay) > c.High
	}
	return cs
}

func mergeNote(read, n int, overlap bool) string {
	how := "the segments' windows do not overlap: the relay's counts over them add up exactly"
	if overlap {
		how = "the segments' windows overlap, so each read the others' work too: each count is the largest segment's (the least the relay counted over the merged window), checked as a range up to their sum"
	}
	return fmt.Sprintf("relay metrics of %d of %d segments (each segment's own under per_segment); %s; a gauge is the last window's", read, n, how)
}

// counterName says whether a series is named as a counter (or a
// histogram's or summary's count and sum), which add up over windows.
func counterName(key string) bool {
	base, _, _ := strings.Cut(key, "{")
	for _, suf := range []string{"_total", "_count", "_sum"} {
		if strings.HasSuffix(base, suf) {
			return true
		}
	}
	return false
}

// overlapping says whether two of the phases' windows overlap.
func overlapping(phs []*results.Phase) bool {
	ws := make([]*results.Phase, 0, len(phs))
	for _, p := range phs {
		if p.RelayMetrics != nil {
			ws = append(ws, p)
		}
	}
	slices.SortFunc(ws, func(a, b *results.Phase) int { return a.Start.Compare(b.Start) })
	for i := 1; i < len(ws); i++ {
		if ws[i].Start.Before(end(ws[i-1])) {
			return true
		}
	}
	return false
}

func end(p *results.Phase) time.Time { return p.Start.Add(time.Duration(p.Duration)) }

// lastWindow is the phase with relay metrics whose window ended last.
func lastWindow(phs []*results.Phase) *results.Phase {
	var last *results.Phase
	for _, p := range phs {
		if p.RelayMetrics != nil && (last == nil || end(p).After(end(last))) {
			last = p
		}
	}
	return last
}
