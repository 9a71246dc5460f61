package report

import (
	"cmp"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"

	"github.com/relaybench/relaybench/results"
)

// noteFigures are the numbers in a note ("1,024", "0.18", "256").
var noteFigures = regexp.MustCompile(`[0-9][0-9.,]*`)

// sweepNote is one note of a sweep's points: its first text and the
// points (phases) that have it.
type sweepNote struct {
	text   string
	at     []*results.Phase
	differ bool // the points' texts differ in their figures
}

// writeSweepNotes prints the notes of a sweep's points ("sweep/<bytes>"
// phases), each point named by its payload size ("1 KiB"). The points'
// notes often say the same with other figures ("closed loop: 4
// connections …" at every size). The brief summary gives such notes once,
// under one heading naming the sizes that have them ("Note for 4 KiB and
// 16 KiB:", "Notes for every size …:", one form for all), with the first size's
// figures and the results keys they name in words; the full one (-v) gives
// each distinct text once with the sizes that have it.
func writeSweepNotes(w io.Writer, phases []*results.Phase) {
	if !isBrief(w) {
		for _, n := range sweepNotes(phases) {
			fmt.Fprintf(w, "  Note (%s): %s\n", sweepSizes(n.at, phases), noteWords(n.text, n.at[0]))
		}
		return
	}
	notes := groupSweepNotes(phases, func(n string) string { return noteFigures.ReplaceAllString(n, "#") })
	var order []string
	bySizes := map[string][]sweepNote{}
	for _, n := range notes {
		k := sweepSizes(n.at, phases)
		if bySizes[k] == nil {
			order = append(order, k)
		}
		bySizes[k] = append(bySizes[k], n)
	}
	for _, k := range order {
		ns := bySizes[k]
		head := "  Notes for " + k // one form for every group, one note or several
		if len(ns) == 1 {
			head = "  Note for " + k
		}
		if slices.ContainsFunc(ns, func(n sweepNote) bool { return n.differ }) {
			head += " (numbers shown for " + fmtPayload(float64(ns[0].at[0].Size)) + "; -v shows each size's)"
		}
		fmt.Fprintln(w, head+":")
		for _, n := range ns {
			fmt.Fprintf(w, "    %s\n", noteWords(n.text, n.at[0]))
		}
	}
}

// sweepNotes are the distinct notes of a sweep's points, each with the
// points that have it: the notes of every size first, then each size's
// own, size by size (the full summary, Markdown and HTML).
func sweepNotes(phases []*results.Phase) []sweepNote {
	notes := groupSweepNotes(phases, func(n string) string { return n })
	rank := func(n sweepNote) int {
		if len(n.at) == len(phases) {
			return -1
		}
		return slices.Index(phases, n.at[0])
	}
	slices.SortStableFunc(notes, func(a, b sweepNote) int { return cmp.Compare(rank(a), rank(b)) })
	return notes
}

// groupSweepNotes groups the notes of phases by key(note), in the order
// first seen.
func groupSweepNotes(phases []*results.Phase, key func(string) string) []sweepNote {
	var order []string
	byKey := map[string]*sweepNote{}
	for _, p := range phases {
		seen := map[string]bool{}
		for _, n := range p.Notes {
			k := key(n)
			if seen[k] {
				continue
			}
			seen[k] = true
			g := byKey[k]
			if g == nil {
				g = &sweepNote{text: n}
				byKey[k] = g
				order = append(order, k)
			}
			g.differ = g.differ || n != g.text
			g.at = append(g.at, p)
		}
	}
	out := make([]sweepNote, 0, len(order))
	for _, k := range order {
		out = append(out, *byKey[k])
	}
	return out
}

// sweepSizes names the points at among all: "every size", or their
// payload sizes ("64 B, 256 B and 1 KiB").
func sweepSizes(at, all []*results.Phase) string {
	if len(at) == len(all) && len(all) > 1 {
		return "every size"
	}
	var names []string
	for _, p := range at {
		names = append(names, fmtPayload(float64(p.Size)))
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// sweepKeyWords are the words for the results keys a sweep's notes name,
// as the sweep table heads them.
var sweepKeyWords = map[string]string{"msgs_per_sec": "throughput (msg/s)", "mb_per_sec": "data throughput (MiB/s)"}

// resultsKey matches a results key in a note ("mb_per_sec", "ok_from_intended").
var resultsKey = regexp.MustCompile(`\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b`)

// noteWords is note n of phase p with the results keys it names in
// words: the sweep table's heads; a latency's label, with its timing when
// it is kept both ways ("ok_from_intended" → "OK latency (from intended
// send time)"); else the key's words ("read back events") when it is one
// of p's figures. Another key stays as it is.
func noteWords(n string, p *results.Phase) string {
	return resultsKey.ReplaceAllStringFunc(n, func(k string) string {
		if s, ok := sweepKeyWords[k]; ok {
			return s
		}
		if lats := latenciesWith(p, k); lats != nil {
			s := latencyLabel(latencyBase(k)) + " latency"
			if t := latencyTiming(lats, k); t != "" {
				s += " (" + t + ")"
			}
			return s
		}
		_, c := p.Counts[k]
		_, r := p.Rates[k]
		if c || r {
			return humanName(k)
		}
		return k
	})
}

// latenciesWith is the latencies of p, or of one of its groups, that
// hold latency k; nil when none does.
func latenciesWith(p *results.Phase, k string) map[string]*results.Histogram {
	if p.Latency[k] != nil {
		return p.Latency
	}
	for _, g := range p.Groups {
		if g.Latency[k] != nil {
			return g.Latency
		}
	}
	return nil
}
