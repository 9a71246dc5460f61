package report

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/relaybench/relaybench/internal/numfmt"
	"github.com/relaybench/relaybench/internal/safe"
	"github.com/relaybench/relaybench/results"
)

// aspect is one thing a baseline and a candidate must share to be
// compared: its value in one results file (or one run of it).
type aspect struct {
	what string // "command", "segment", "corpus" (or "events"), "parameters", "machine"
	val  string // compared, and said
	// alt is a generated corpus's val without its anchor: compared instead
	// when either side's anchor is unknown (a file older than the anchor).
	alt       string
	noAnchor  bool
	fresh     bool // the run published fresh events, not the corpus
	params    map[string]any
	file, who string // "baseline 2"; "baseline"
}

// aspectOrder is the order differences are named in: the command first
// (load against mixed says nothing else that matters), the machine last.
var aspectOrder = []string{"command", "segment", "corpus", "parameters", "machine"}

// Comparable checks that baseline and candidate runs measured the same
// thing on the same kind of machine: the same command (run and compare
// are one), the same share of a test (a segment's file is one share: merge
// the segments first), the same corpus (seed, events, authors, content
// size, anchor; a dump's fingerprint) or, for fresh-event workloads, the
// same fresh events, the same parameters (but the relay commands and the
// repeat count) and the same machine (CPU model, cores, OS and
// architecture). It returns a one-line reason when they did not, naming
// the two files (baseline 2, candidate 1: their order on the command line)
// and what differs, the most telling first; two baselines (or two
// candidates) that differ among themselves are said to, as such.
func Comparable(base, cand []*results.File) error {
	first := map[string]aspect{}
	check := func(side string, files []*results.File) error {
		for n, f := range files {
			file := fmt.Sprintf("%s %d", side, n+1)
			var diffs [][2]aspect
			for _, v := range fileAspects(f) {
				v.file, v.who = file, side
				old, ok := first[v.what]
				if !ok {
					first[v.what] = v
					continue
				}
				if !sameAspect(old, v) && !slices.ContainsFunc(diffs, func(d [2]aspect) bool { return d[1].what == v.what }) {
					diffs = append(diffs, [2]aspect{old, v})
				}
			}
			if len(diffs) > 0 {
				return refusal(diffs)
			}
		}
		return nil
	}
	if err := check("baseline", base); err != nil {
		return err
	}
	return check("candidate", cand)
}

// fileAspects are f's aspects: its command, then each run's segment,
// corpus and parameters, and its machine.
func fileAspects(f *results.File) []aspect {
	m := fmt.Sprintf("%s, %d cores, %s/%s", f.Machine.CPUModel, f.Machine.Cores, f.Machine.OS, f.Machine.Arch)
	out := []aspect{{what: "command", val: commandKind(f.Command)}}
	for i := range f.Runs {
		r := &f.Runs[i]
		if r.Skipped != "" {
			continue
		}
		out = append(out, aspect{what: "segment", val: segmentKey(f, r)}, eventsAspect(r),
			aspect{what: "parameters", val: paramsKey(r.Params), params: r.Params})
	}
	return append(out, aspect{what: "machine", val: m})
}

// sameAspect reports whether a and b are the same: a generated corpus
// whose anchor one side does not know is compared without it.
func sameAspect(a, b aspect) bool {
	if a.what == "corpus" && (a.noAnchor || b.noAnchor) && a.alt != "" && b.alt != "" {
		return a.alt == b.alt
	}
	return a.val == b.val
}

// refusal is the one-line error of diffs (old, new pairs): the first two
// differences with each side's value, in aspectOrder, any further ones
// named only.
func refusal(diffs [][2]aspect) error {
	sort.SliceStable(diffs, func(i, j int) bool {
		return slices.Index(aspectOrder, diffs[i][0].what) < slices.Index(aspectOrder, diffs[j][0].what)
	})
	old, v := diffs[0][0], diffs[0][1]
	who := "baseline and candidate differ"
	if old.who == v.who {
		who = "the " + v.who + "s differ among themselves"
	}
	var parts, named []string
	for i, d := range diffs {
		what, ov, nv := d[0].what, d[0].val, d[1].val
		if what == "corpus" && (d[0].fresh || d[1].fresh) {
			what = "events" // what each published, as its summary's Corpus or Events line says
		}
		if i >= 2 {
			named = append(named, what) // "parameters": their list would be long
			continue
		}
		if what == "parameters" {
			what, ov, nv = paramsDiff(d[0].params, d[1].params)
		}
		parts = append(parts, fmt.Sprintf("in %s (%s: %s; %s: %s)", what, d[0].file, ov, d[1].file, nv))
	}
	s := who + " " + strings.Join(parts, " and ")
	if len(named) > 0 {
		s += ", and in " + strings.Join(named, ", ")
	}
	return fmt.Errorf("%s: refusing to compare (--force to compare anyway)", s)
}

// commandKind is the command a results file's runs are compared by: a
// compare is runs of several relays, each as run measures it.
func commandKind(c string) string {
	if c == "compare" {
		return "run"
	}
	return safe.Line(c)
}

// segmentKey says which share of a test r is: one segment of a test split
// over instances (run --segment I/N, not merged), else the whole test.
func segmentKey(f *results.File, r *results.Run) string {
	if s := r.Segment; s != nil && s.Count > 1 && f.Merged == nil {
		return fmt.Sprintf("segment %d of %d (--segment %d/%d), one share of a test: merge the segments' files first (relaybench merge) and compare the merge", s.Index, s.Count, s.Index, s.Count)
	}
	return "the whole test"
}

// eventsAspect is what r published, as its summary says it: the fresh
// events of a load or find-max publishing (freshLine), else the corpus
// (and the fresh events a mixed load published besides).
func eventsAspect(r *results.Run) aspect {
	if e := freshLine(r); e != "" {
		return aspect{what: "corpus", val: e, fresh: true}
	}
	a := aspect{what: "corpus", val: corpusKey(r.Corpus), alt: corpusKey(r.Corpus)}
	if c := r.Corpus; c.Fingerprint == "" {
		a.noAnchor = c.Anchor == 0
		if c.Anchor != 0 {
			a.val += ", anchor " + time.Unix(c.Anchor, 0).UTC().Format(time.RFC3339)
		}
	}
	if m := mixedFreshLine(r); m != "" {
		a.val += "; " + m
		a.alt += "; " + m
	}
	return a
}

// corpusKey names a run's corpus for Comparable, as the summary's Corpus
// line does, without what varies from run to run (cached, bytes).
func corpusKey(c results.Corpus) string {
	if c.Fingerprint != "" {
		// An event dump: its fingerprint (sha256 over the ordered ids) is the corpus.
		return fmt.Sprintf("%s events from %s, fingerprint %s", numfmt.Group(int64(c.Events)), safe.Line(c.Source), safe.Line(c.Fingerprint))
	}
	return fmt.Sprintf("%s events, %s authors, average content %s B, seed %d", numfmt.Group(int64(c.Events)),
		numfmt.Group(int64(c.Authors)), numfmt.Group(int64(c.AvgSize)), c.Seed)
}

// paramsDiff names the parameters (as paramsKey keeps them) on which a and b
// differ, "parameter concurrency" or "parameters a, b", with each side's
// values of those only, in words as the Params line says them
// ("concurrency 4"; "concurrency not set" when the run had none).
func paramsDiff(a, b map[string]any) (what, av, bv string) {
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	delete(keys, "relays")
	delete(keys, "repeat")
	val := func(p map[string]any, k string) string {
		v, ok := p[k]
		if !ok {
			return strings.ReplaceAll(k, "_", " ") + " not set"
		}
		return paramWords(k, v)
	}
	var names, as, bs []string
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		if val(a, k) != val(b, k) {
			names, as, bs = append(names, k), append(as, val(a, k)), append(bs, val(b, k))
		}
	}
	what = "parameter "
	if len(names) > 1 {
		what = "parameters "
	}
	for i, n := range names {
		names[i] = strings.ReplaceAll(n, "_", " ")
	}
	return what + strings.Join(names, ", "), strings.Join(as, ", "), strings.Join(bs, ", ")
}

// paramsKey is the run parameters that shape a measurement, as one string.
func paramsKey(p map[string]any) string {
	var keys []string
	for k := range p {
		if k == "relays" || k == "repeat" {
			continue // which relay, and how often: what is compared
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%v", k, p[k]))
	}
	return strings.Join(parts, " ")
}
