// Package merge combines the results files of the execution segments of one
// test (relaybench --segment I/N) into one results file, exactly: counters
// and accounts add, HDR histograms merge losslessly (percentiles are never
// averaged), per-second series align on the wall clock, resources are
// listed per machine, and query answers are judged again against what all
// segments' relay stored (see cross.go). Results files in, one results file
// out: every report renders the merged file like any other.
package merge

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/relaybench/relaybench/metrics"
	"github.com/relaybench/relaybench/nostr"
	"github.com/relaybench/relaybench/relaymetrics"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/verify"
)

// Input is one segment's results file.
type Input struct {
	Name string // the file's name, for messages and the merged file's sources
	File *results.File
}

// Options configure a merge.
type Options struct {
	// Force merges files whose command, parameters, corpus or start time
	// differ, and runs of relays relaybench started per segment.
	Force bool
	// Args is the merge's own command line as typed ("merge -o m.json
	// seg0.json seg1.json"), recorded as Merged.Command. The merged file's
	// Args are always the segments' (their --segment written for all,
	// their output flags left out): the command whose figures it holds,
	// the Command line of every report of it.
	Args []string
	// Corpus rebuilds the events of the corpus a run used, in corpus order,
	// for the cross-segment check of query answers (nil: the answers are
	// not judged again, and the merged query verification is unverified).
	Corpus func(ctx context.Context, r *results.Run) ([]*nostr.Event, error)
	// ClockTolerance widens every comparison of wall-clock times between
	// segments (on top of the segments' own clock-offset error bounds).
	ClockTolerance time.Duration
}

// UsageError is a reason the files cannot be merged (exit status 2): not
// segments of one test. It is one line.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

func usage(format string, a ...any) error { return &UsageError{Msg: fmt.Sprintf(format, a...)} }

// ignoredParams are run and phase parameters that legitimately differ
// between segments.
var ignoredParams = map[string]bool{"segment": true, "start_at": true, "segment_share": true, "json": true, "out": true}

// Merge merges the segments' files into one. The files may come in any
// order; they must be segments 0…N-1 of one test, each exactly once.
func Merge(ctx context.Context, in []Input, o Options) (*results.File, error) {
	if len(in) == 0 {
		return nil, usage("merge: no results files given")
	}
	segs, warns, err := check(in, o.Force)
	if err != nil {
		return nil, err
	}
	first := segs[0].File
	out := &results.File{
		Schema:  results.SchemaVersion,
		Tool:    first.Tool,
		Machine: first.Machine,
		Command: first.Command,
		Args:    segmentArgs(first.Args),
		Title:   first.Title,
		Merged:  &results.Merged{Segments: len(segs), Warnings: warns, Command: o.Args},
	}
	for i, s := range segs {
		f := s.File
		if i == 0 || f.StartedAt.Before(out.StartedAt) {
			out.StartedAt = f.StartedAt
		}
		if f.FinishedAt.After(out.FinishedAt) {
			out.FinishedAt = f.FinishedAt
		}
		out.Interrupted = out.Interrupted || f.Interrupted
		out.Merged.Sources = append(out.Merged.Sources, results.MergedSource{
			Segment: i, File: s.Name, Machine: f.Machine, Tool: f.Tool,
			StartedAt: f.StartedAt, FinishedAt: f.FinishedAt, Verdict: f.Verdict,
		})
	}
	out.Merged.StartSpreadNs = startSpread(segs)
	cross := true
	for ri := range first.Runs {
		runs := make([]*results.Run, len(segs))
		for i, s := range segs {
			runs[i] = &s.File.Runs[ri]
		}
		r, checked, err := mergeRun(ctx, runs, segs, o)
		if err != nil {
			return nil, err
		}
		cross = cross && checked
		out.Runs = append(out.Runs, r)
	}
	out.Merged.CrossChecked = cross
	if sp := out.Merged.StartSpreadNs; sp > results.SegmentStartSpreadWarnNs {
		out.Merged.Warnings = append(out.Merged.Warnings, fmt.Sprintf("the segments did not start together: their starts spread over %s (above %s): the merged window holds time when not every segment ran",
			time.Duration(sp).Round(time.Millisecond), time.Duration(results.SegmentStartSpreadWarnNs)))
	}
	return out, nil
}

// check orders the inputs by segment and refuses files that are not the
// segments of one test; the warnings name differences that do not stop a
// merge (tool version, machines).
func check(in []Input, force bool) ([]Input, []string, error) {
	var warns []string
	n := -1
	segs := map[int]Input{}
	for _, s := range in {
		f := s.File
		if f == nil || len(f.Runs) == 0 {
			return nil, nil, usage("merge: %s holds no runs", s.Name)
		}
		sg := f.Runs[0].Segment
		if sg == nil {
			return nil, nil, usage("merge: %s is not a segment's results (run with --segment I/N)", s.Name)
		}
		for i := range f.Runs {
			if g := f.Runs[i].Segment; g == nil || g.Index != sg.Index || g.Count != sg.Count {
				return nil, nil, usage("merge: %s: its runs are not all segment %d/%d", s.Name, sg.Index, sg.Count)
			}
		}
		if n == -1 {
			n = sg.Count
		} else if sg.Count != n {
			return nil, nil, usage("merge: %s is segment %d/%d, others are of %d segments", s.Name, sg.Index, sg.Count, n)
		}
		if sg.Index < 0 || sg.Index >= sg.Count {
			return nil, nil, usage("merge: %s: segment %d/%d is out of range", s.Name, sg.Index, sg.Count)
		}
		if prev, dup := segs[sg.Index]; dup {
			return nil, nil, usage("merge: %s and %s are both segment %d/%d", prev.Name, s.Name, sg.Index, n)
		}
		segs[sg.Index] = s
	}
	ordered := make([]Input, n)
	var missing []string
	for i := 0; i < n; i++ {
		s, ok := segs[i]
		if !ok {
			missing = append(missing, fmt.Sprint(i))
			continue
		}
		ordered[i] = s
	}
	if len(missing) > 0 {
		return nil, nil, usage("merge: segment %s of %d missing (give every segment's file once)", strings.Join(missing, ", "), n)
	}
	a := ordered[0]
	for _, s := range ordered[1:] {
		f, g := a.File, s.File
		if f.Tool.Version != g.Tool.Version || f.Tool.Commit != g.Tool.Commit {
			warns = appendOnce(warns, fmt.Sprintf("the segments ran different relaybench builds (%s: %s %s; %s: %s %s)", a.Name, f.Tool.Version, f.Tool.Commit, s.Name, g.Tool.Version, g.Tool.Commit))
		}
		if f.Command != g.Command {
			return nil, nil, usage("merge: %s ran %q, %s ran %q: not one test", a.Name, f.Command, s.Name, g.Command)
		}
		if len(f.Runs) != len(g.Runs) {
			return nil, nil, usage("merge: %s holds %d runs, %s holds %d: not one test", a.Name, len(f.Runs), s.Name, len(g.Runs))
		}
		for ri := range f.Runs {
			if err := sameRun(&f.Runs[ri], &g.Runs[ri], a.Name, s.Name, force); err != nil {
				return nil, nil, err
			}
		}
		if x, y := f.Runs[0].Segment.StartAt, g.Runs[0].Segment.StartAt; (x == nil) != (y == nil) || x != nil && !x.Equal(*y) {
			if !force {
				return nil, nil, usage("merge: %s and %s have different --start-at (%s, %s): not started together (--force merges them)", a.Name, s.Name, fmtAt(x), fmtAt(y))
			}
			warns = appendOnce(warns, "the segments were given different --start-at times")
		}
		if x, y := f.Runs[0].Segment.QueryAt, g.Runs[0].Segment.QueryAt; (x == nil) != (y == nil) || x != nil && !x.Equal(*y) {
			if !force {
				return nil, nil, usage("merge: %s and %s have different --query-at (%s, %s): not one test (--force merges them)", a.Name, s.Name, fmtAt(x), fmtAt(y))
			}
			warns = appendOnce(warns, "the segments were given different --query-at times")
		}
	}
	hosts := map[string]bool{}
	for _, s := range ordered {
		hosts[s.File.Machine.Hostname] = true
	}
	if len(hosts) > 1 {
		warns = appendOnce(warns, fmt.Sprintf("the segments ran on %d machines: resources are listed per machine, and wall-clock times compare across machines only within their clock offsets", len(hosts)))
	}
	return ordered, warns, nil
}

func fmtAt(t *time.Time) string {
	if t == nil {
		return "none"
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// sameRun refuses runs of different relays, corpora, parameters or phases.
func sameRun(r, q *results.Run, an, bn string, force bool) error {
	if relayKey(&r.Relay) != relayKey(&q.Relay) {
		return usage("merge: %s measured %s, %s measured %s: one test measures one relay", an, relayKey(&r.Relay), bn, relayKey(&q.Relay))
	}
	if (r.Relay.Managed || q.Relay.Managed) && !force {
		return usage("merge: %s: each segment started its own relay %s: segments must share one relay (give them --relay URL; --force merges anyway)", an, relayKey(&r.Relay))
	}
	if !force {
		if r.Corpus.Key != q.Corpus.Key || r.Corpus.Fingerprint != q.Corpus.Fingerprint || r.Corpus.Events != q.Corpus.Events {
			return usage("merge: %s and %s used different corpora (key %s, %s): not one test (--force merges them)", an, bn, r.Corpus.Key, q.Corpus.Key)
		}
		if k, ok := diffParams(r.Params, q.Params); !ok {
			return usage("merge: %s and %s differ in parameter %q: not one test (--force merges them)", an, bn, k)
		}
	}
	if len(r.Phases) != len(q.Phases) {
		return usage("merge: %s has %d phases, %s has %d: not one test", an, len(r.Phases), bn, len(q.Phases))
	}
	for i := range r.Phases {
		if r.Phases[i].Name != q.Phases[i].Name {
			return usage("merge: phase %d is %q in %s, %q in %s: not one test", i+1, r.Phases[i].Name, an, q.Phases[i].Name, bn)
		}
	}
	return nil
}

func relayKey(r *results.Relay) string {
	if r.Name != "" {
		return r.Name
	}
	return r.URL
}

// diffParams compares two parameter maps, ignoring those that differ by
// segment; it returns the first differing key.
func diffParams(a, b map[string]any) (string, bool) {
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	names := make([]string, 0, len(keys))
	for k := range keys {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if ignoredParams[k] {
			continue
		}
		x, _ := json.Marshal(a[k])
		y, _ := json.Marshal(b[k])
		if string(x) != string(y) {
			return k, false
		}
	}
	return "", true
}

// startSpread is max − min of the segments' actual starts on the relay's
// clock where measured (0 without --start-at).
func startSpread(segs []Input) int64 {
	var lo, hi int64
	for i, s := range segs {
		g := s.File.Runs[0].Segment
		if g.StartAt == nil {
			return 0
		}
		t := g.StartAt.UnixNano() + g.StartLateNs
		if g.ClockOffsetSource != "" && !oneClock(segs) {
			t -= g.ClockOffsetNs
		}
		if i == 0 || t < lo {
			lo = t
		}
		if i == 0 || t > hi {
			hi = t
		}
	}
	return hi - lo
}

// mergeRun merges segment i's run runs[i]; checked says the query answers
// were judged across segments (or there were none to judge).
func mergeRun(ctx context.Context, runs []*results.Run, segs []Input, o Options) (results.Run, bool, error) {
	a := runs[0]
	n := len(runs)
	out := results.Run{Relay: a.Relay, Corpus: a.Corpus, Repeat: a.Repeat, Params: copyParams(a.Params)}
	for _, r := range runs[1:] {
		out.Corpus.Cached = out.Corpus.Cached && r.Corpus.Cached
		out.Corpus.SignSecs = math.Max(out.Corpus.SignSecs, r.Corpus.SignSecs)
	}
	// The header says "merged from N segments"; this says what they ran and
	// how every phase was merged, once for the run (not in each phase).
	// The command line itself is the file's (the Command line above).
	out.Notes = append(out.Notes, fmt.Sprintf("segments %s of segment 0's command line (the Command line above): counts and accounts added, histograms merged; each phase's window runs from the earliest segment's start to the latest one's end, its rates are the merged counts over it; resources are listed per segment (machine), the client CPU is their sum",
		segmentList(n)))
	out.Errors = prefixed(n, func(i int) []string { return runs[i].Errors })
	var skipped []string
	for i, r := range runs {
		if r.Skipped != "" {
			skipped = append(skipped, fmt.Sprintf("segment %d: %s", i, r.Skipped))
		}
	}
	out.Skipped = strings.Join(skipped, "; ")
	series := false // a phase has per-second percentiles, which are not merged
	for pi := range a.Phases {
		phs := make([]*results.Phase, n)
		for i, r := range runs {
			phs[i] = &r.Phases[pi]
		}
		ph, err := mergePhase(phs, segs)
		if err != nil {
			return out, false, err
		}
		out.Phases = append(out.Phases, ph)
		series = series || hasSeriesPercentiles(phs)
	}
	if series && n > 1 {
		out.Notes = append(out.Notes, "per-second p50/p99 are not merged (the per-second histograms are not in the results files): a second where several segments ran shows only its exact maximum")
	}
	// The merge's own notes first, then the segments' (prefixed).
	out.Notes = append(out.Notes, prefixed(n, func(i int) []string { return runs[i].Notes })...)
	if oneClock(segs) {
		runs = withoutOffsets(runs)
	}
	checked, err := crossCheck(ctx, &out, runs, o)
	return out, checked, err
}

// oneClock reports whether every segment ran on one machine (one
// hostname): their wall clocks are then one clock, and the offsets they
// estimated to the relay's (noisy by their error bounds) are not applied.
func oneClock(segs []Input) bool {
	h := segs[0].File.Machine.Hostname
	for _, s := range segs {
		if s.File.Machine.Hostname != h || h == "" {
			return false
		}
	}
	return true
}

// withoutOffsets are shallow copies of runs whose segments carry no
// measured clock offset.
func withoutOffsets(runs []*results.Run) []*results.Run {
	out := make([]*results.Run, len(runs))
	for i, r := range runs {
		c := *r
		if r.Segment != nil {
			g := *r.Segment
			g.ClockOffsetSource, g.ClockOffsetNs, g.ClockOffsetErrNs = "", 0, 0
			c.Segment = &g
		}
		out[i] = &c
	}
	return out
}

func copyParams(p map[string]any) map[string]any {
	if p == nil {
		return nil
	}
	out := make(map[string]any, len(p))
	for k, v := range p {
		if k != "segment" && k != "segment_share" {
			out[k] = v
		}
	}
	return out
}

// prefixed concatenates the segments' lines: a line every segment has is
// kept once, said of each segment (its figures are a segment's: "closed
// loop: 3 connections" of each of 2 segments is 6 in all); any other is
// prefixed with its segment. A line that starts by naming its own segment
// ("segment 0/2: this segment's share …") is compared without that. The
// lines every segment has come first, then segment 0's own, segment 1's,
// …: never segment 0, both, segment 1 interleaved.
func prefixed(n int, segLines func(i int) []string) []string {
	lines := make([][]string, n)
	count := map[string]int{}
	for i := range n {
		own := fmt.Sprintf("segment %d/%d: ", i, n)
		seen := map[string]bool{}
		for _, l := range segLines(i) {
			l = strings.TrimPrefix(l, own)
			lines[i] = append(lines[i], l)
			if !seen[l] {
				seen[l] = true
				count[l]++
			}
		}
	}
	if n == 1 {
		return lines[0]
	}
	var out []string
	done := map[string]bool{}
	for i := range n { // what every segment says, once, in the order they said it
		for _, l := range lines[i] {
			if count[l] == n && !done[l] {
				done[l] = true
				out = append(out, fmt.Sprintf("each of the %d segments: %s", n, l))
			}
		}
	}
	for i := range n { // then segment 0's own, segment 1's, …
		for _, l := range lines[i] {
			if count[l] < n {
				out = append(out, fmt.Sprintf("segment %d: %s", i, l))
			}
		}
	}
	return out
}

func appendOnce(dst []string, s string) []string {
	for _, d := range dst {
		if d == s {
			return dst
		}
	}
	return append(dst, s)
}

// mergePhase merges one phase of every segment.
func mergePhase(phs []*results.Phase, segs []Input) (results.Phase, error) {
	a := phs[0]
	n := len(phs)
	out := results.NewPhase(a.Name, a.Workload)
	out.Params, out.Skipped, out.Size = copyParams(a.Params), a.Skipped, a.Size
	var end time.Time
	started := false
	for i, p := range phs {
		if p.Duration <= 0 && p.Start.IsZero() {
			continue
		}
		if !started || p.Start.Before(out.Start) {
			out.Start = p.Start
		}
		if e := p.Start.Add(time.Duration(p.Duration)); !started || e.After(end) {
			end = e
		}
		started = true
		out.SetupSecs = math.Max(out.SetupSecs, p.SetupSecs)
		out.ClientLimited = out.ClientLimited || p.ClientLimited
		host := ""
		if i < len(segs) {
			host = segs[i].File.Machine.Hostname
		}
		out.PerSegment = append(out.PerSegment, results.SegmentPart{Segment: i, Host: host, Start: p.Start, Duration: p.Duration, Resources: p.Resources, ClientLimited: p.ClientLimited})
	}
	if started {
		out.Duration = int64(end.Sub(out.Start))
	}
	out.Counts = addCounts(n, func(i int) map[string]int64 { return phs[i].Counts })
	if out.Counts == nil {
		out.Counts = map[string]int64{}
	}
	ratioCounts(out.Counts, n, func(i int) map[string]int64 { return phs[i].Counts })
	out.Refused = addCounts(n, func(i int) map[string]int64 { return phs[i].Refused })
	lat, err := mergeLatency(n, func(i int) map[string]*results.Histogram { return phs[i].Latency })
	if err != nil {
		return out, fmt.Errorf("phase %s: %w", a.Name, err)
	}
	out.Latency = lat
	var dropped []string
	out.Rates, dropped = phaseRates(phs, out.Counts, out.Duration)
	groups, err := mergeGroups(phs)
	if err != nil {
		return out, fmt.Errorf("phase %s: %w", a.Name, err)
	}
	out.Groups = groups
	out.Series = mergeSeries(phs, out.Start)
	out.Verification = mergeVerification(n, func(i int) *results.Verification { return phs[i].Verification })
	out.Resources = mergeResources(phs)
	out.Accounts = mergeAccounts(phs)
	var aborted []string
	for i, p := range phs {
		if p.Aborted != "" {
			aborted = append(aborted, fmt.Sprintf("segment %d: %s", i, p.Aborted))
		}
	}
	out.Aborted = strings.Join(aborted, "; ")
	dnotes, err := mergeDeliveries(&out, phs) // subscribe segments (deliveries.go)
	if err != nil {
		return out, err
	}
	dropped = withoutDeliveryRatio(dropped, out.Rates)
	out.Notes = dnotes // the merge's own notes first, then the segments' (prefixed)
	if len(dropped) > 0 {
		out.Notes = append(out.Notes, "not recomputable from merged counts, left out: "+strings.Join(dropped, ", "))
	}
	out.Notes = append(out.Notes, prefixed(n, func(i int) []string { return phs[i].Notes })...)
	out.Errors = prefixed(n, func(i int) []string { return phs[i].Errors })
	relaymetrics.Merge(&out, phs) // the relay's own metrics (--relay-metrics), kept per segment too
	return out, nil
}

// perCounts are counts that are ratios, each with the count it divides:
// merged as the ratio of the sums (total / units over every segment), not
// summed.
var perCounts = map[string]string{
	"client_bytes_per_subscription": "client_rss_idle_bytes", // bytes per idle subscription
}

// ratioCounts replaces the summed ratios of out by the ratio of the sums.
func ratioCounts(out map[string]int64, n int, get func(i int) map[string]int64) {
	for per, total := range perCounts {
		units, tot := 0.0, int64(0)
		for i := 0; i < n; i++ {
			c := get(i)
			if p := c[per]; p > 0 && c[total] > 0 {
				units += float64(c[total]) / float64(p)
				tot += c[total]
			}
		}
		if units > 0 {
			out[per] = int64(float64(tot)/units + 0.5)
		}
	}
}

func addCounts(n int, get func(i int) map[string]int64) map[string]int64 {
	var out map[string]int64
	for i := 0; i < n; i++ {
		for k, v := range get(i) {
			if out == nil {
				out = map[string]int64{}
			}
			out[k] += v
		}
	}
	return out
}

// mergeLatency merges the histograms by name, losslessly (HDR encodings).
func mergeLatency(n int, get func(i int) map[string]*results.Histogram) (map[string]*results.Histogram, error) {
	hs := map[string]*metrics.Histogram{}
	for i := 0; i < n; i++ {
		for k, r := range get(i) {
			h, err := metrics.FromResult(r)
			if err != nil {
				return nil, fmt.Errorf("segment %d latency %s: %w", i, k, err)
			}
			if hs[k] == nil {
				hs[k] = h
			} else {
				hs[k].Merge(h)
			}
		}
	}
	if len(hs) == 0 {
		return nil, nil
	}
	out := make(map[string]*results.Histogram, len(hs))
	for k, h := range hs {
		out[k] = h.Result()
	}
	return out, nil
}

// rateCounts names the count a per-second rate is made of, and its scale.
var rateCounts = map[string]struct {
	count string
	scale float64
}{
	results.RateEvents:     {results.CountAccepted, 1},
	results.RateSent:       {results.CountSent, 1},
	results.RateMB:         {results.CountBytesSent, 1e-6},
	results.RateQueries:    {results.CountQueries, 1},
	results.RateDeliveries: {results.CountDeliveries, 1},
	"accepted_per_sec":     {results.CountAccepted, 1},
	results.RateMsgs:       {results.CountAccepted, 1},
}

// phaseRates recomputes the phase's rates over the merged window: from the
// merged counts where the rate is a count over the window, else (another
// per-second rate) from each segment's rate × its window; other rates
// (ratios) cannot be recomputed and are named in dropped.
func phaseRates(phs []*results.Phase, counts map[string]int64, dur int64) (map[string]float64, []string) {
	keys := map[string]bool{}
	for _, p := range phs {
		for k := range p.Rates {
			keys[k] = true
		}
	}
	if len(keys) == 0 {
		return nil, nil
	}
	out := map[string]float64{}
	var dropped []string
	secs := float64(dur) / 1e9
	for k := range keys {
		if rc, ok := rateCounts[k]; ok {
			if c, ok := counts[rc.count]; ok && secs > 0 {
				out[k] = float64(c) * rc.scale / secs
				continue
			}
		}
		if strings.HasSuffix(k, "_per_sec") && secs > 0 && !strings.Contains(k, "_alone") {
			var total float64
			for _, p := range phs {
				total += p.Rates[k] * float64(p.Duration) / 1e9
			}
			out[k] = total / secs
			continue
		}
		if len(phs) == 1 {
			out[k] = phs[0].Rates[k]
			continue
		}
		dropped = append(dropped, "rate "+k)
	}
	sort.Strings(dropped)
	return out, dropped
}

// mergeGroups merges groups by name, in the order a single run gives
// them: a phase's query shapes (params.shapes) in their order, whichever
// segment ran each; other groups in first-seen order.
func mergeGroups(phs []*results.Phase) ([]results.Group, error) {
	var names []string
	by := map[string][]*results.Group{}
	idx := map[string][]int{}
	for i, p := range phs {
		for gi := range p.Groups {
			g := &p.Groups[gi]
			if _, ok := by[g.Name]; !ok {
				names = append(names, g.Name)
			}
			by[g.Name] = append(by[g.Name], g)
			idx[g.Name] = append(idx[g.Name], i)
		}
	}
	sortByShapes(names, phs)
	var out []results.Group
	for _, name := range names {
		gs := by[name]
		n := len(gs)
		g := results.Group{Name: name}
		g.Counts = addCounts(n, func(i int) map[string]int64 { return gs[i].Counts })
		lat, err := mergeLatency(n, func(i int) map[string]*results.Histogram { return gs[i].Latency })
		if err != nil {
			return nil, fmt.Errorf("group %s: %w", name, err)
		}
		g.Latency = lat
		g.Verification = mergeVerification(n, func(i int) *results.Verification { return gs[i].Verification })
		g.Rates = groupRates(gs, func(i int) int64 { return phs[idx[name][i]].Duration }, phaseWindow(phs))
		out = append(out, g)
	}
	return out, nil
}

// sortByShapes puts the names that are query shapes of the phases'
// params.shapes first, in that list's order (each segment runs some shapes
// of the rotation, so first-seen order interleaves them); the others keep
// their order after them.
func sortByShapes(names []string, phs []*results.Phase) {
	rank := map[string]int{}
	for _, p := range phs {
		for _, n := range paramStrings(p.Params["shapes"]) {
			if _, seen := rank[n]; !seen {
				rank[n] = len(rank)
			}
		}
	}
	if len(rank) == 0 {
		return
	}
	of := func(n string) int {
		if r, ok := rank[n]; ok {
			return r
		}
		return len(rank)
	}
	sort.SliceStable(names, func(i, j int) bool { return of(names[i]) < of(names[j]) })
}

// paramStrings is a list parameter's strings: []string as built, []any
// as read from a results file.
func paramStrings(v any) []string {
	switch l := v.(type) {
	case []string:
		return l
	case []any:
		var out []string
		for _, x := range l {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

func phaseWindow(phs []*results.Phase) int64 {
	var start, end time.Time
	for i, p := range phs {
		e := p.Start.Add(time.Duration(p.Duration))
		if i == 0 || p.Start.Before(start) {
			start = p.Start
		}
		if i == 0 || e.After(end) {
			end = e
		}
	}
	return int64(end.Sub(start))
}

// groupRates recomputes a group's per-second rates. A group's rate is its
// count over some time: the phase's window, or the time the group's own
// operations took (a query shape's REQ→EOSE time). Each segment's time is
// found as count / rate; when it is the segment's window the merged rate
// is over the merged window, else over the sum of the segments' times.
func groupRates(gs []*results.Group, segDur func(i int) int64, window int64) map[string]float64 {
	keys := map[string]bool{}
	for _, g := range gs {
		for k := range g.Rates {
			keys[k] = true
		}
	}
	if len(keys) == 0 {
		return nil
	}
	if len(gs) == 1 {
		return gs[0].Rates
	}
	out := map[string]float64{}
	for k := range keys {
		ck := strings.TrimSuffix(k, "_per_sec")
		if rc, ok := rateCounts[k]; ok {
			ck = rc.count
		}
		if ck == k {
			continue // a ratio: not recomputable
		}
		var count int64
		var busy float64
		windowed := true
		for i, g := range gs {
			c, ok := g.Counts[ck]
			if !ok {
				windowed = false
				busy = -1
				break
			}
			count += c
			if r := g.Rates[k]; r > 0 {
				t := float64(c) / r
				busy += t
				d := float64(segDur(i)) / 1e9
				if math.Abs(t-d) > 0.01*d {
					windowed = false
				}
			}
		}
		switch {
		case busy < 0:
			continue
		case windowed && window > 0:
			out[k] = float64(count) / (float64(window) / 1e9)
		case busy > 0:
			out[k] = float64(count) / busy
		}
	}
	return out
}

// mergeSeries aligns the segments' series on the wall clock: a point whose
// bucket starts at wall time t goes into the merged bucket of the same
// width that holds t (measured from start). Counts and gauges add; the max
// latency is the max; p50/p99 are kept only where one segment contributed.
func mergeSeries(phs []*results.Phase, start time.Time) []results.Second {
	width := int64(0)
	for _, p := range phs {
		for _, s := range p.Series {
			w := s.WidthMs
			if w == 0 {
				w = 1000
			}
			if w > width {
				width = w
			}
		}
	}
	if width == 0 {
		return nil
	}
	type bucket struct {
		s       results.Second
		sources int
	}
	buckets := map[int64]*bucket{}
	for _, p := range phs {
		off := p.Start.Sub(start).Milliseconds()
		for _, s := range p.Series {
			at := s.AtMs
			if s.WidthMs == 0 {
				at = int64(s.T) * 1000
			}
			// Round to the nearest bucket: segments that started together
			// are a few milliseconds apart.
			k := (off + at + width/2) / width
			if off+at < 0 {
				k = 0
			}
			b := buckets[k]
			if b == nil {
				b = &bucket{}
				buckets[k] = b
			}
			b.sources++
			for c, v := range s.Counts {
				if b.s.Counts == nil {
					b.s.Counts = map[string]int64{}
				}
				b.s.Counts[c] += v
			}
			for c, v := range s.Gauges {
				if b.s.Gauges == nil {
					b.s.Gauges = map[string]int64{}
				}
				b.s.Gauges[c] += v
			}
			if s.LatMaxNs > b.s.LatMaxNs {
				b.s.LatMaxNs = s.LatMaxNs
			}
			if b.sources == 1 {
				b.s.LatP50Ns, b.s.LatP99Ns = s.LatP50Ns, s.LatP99Ns
			} else if s.LatP50Ns != 0 || s.LatP99Ns != 0 || b.s.LatP50Ns != 0 {
				b.s.LatP50Ns, b.s.LatP99Ns = 0, 0
			}
		}
	}
	keys := make([]int64, 0, len(buckets))
	for k := range buckets {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	out := make([]results.Second, 0, len(keys))
	for _, k := range keys {
		s := buckets[k].s
		at := k * width
		s.T = int(at / 1000)
		if width != 1000 {
			s.AtMs, s.WidthMs = at, width
		}
		out = append(out, s)
	}
	return out
}

func hasSeriesPercentiles(phs []*results.Phase) bool {
	for _, p := range phs {
		for _, s := range p.Series {
			if s.LatP50Ns != 0 || s.LatP99Ns != 0 {
				return true
			}
		}
	}
	return false
}

// mergeVerification adds the segments' verifications: failed if any one
// failed; a segment that checked nothing adds nothing (the sum is not
// verified only when no segment checked an answer).
func mergeVerification(n int, get func(i int) *results.Verification) *results.Verification {
	var out *results.Verification
	passed := true
	for i := 0; i < n; i++ {
		v := get(i)
		if v == nil {
			continue
		}
		if out == nil {
			out = &results.Verification{}
		}
		verify.Add(out, v)
		passed = passed && v.Status() != results.VerificationFailed
	}
	if out != nil {
		verify.Finish(out)
		if !passed {
			out.Fail()
		}
	}
	return out
}

// mergeResources is the phase's resources: relay figures only when one
// segment sampled the relay (it is one relay), and the client CPU summed
// over the segments; each segment's own figures are in PerSegment.
func mergeResources(phs []*results.Phase) *results.Resources {
	out := &results.Resources{}
	sampled := 0
	for _, p := range phs {
		r := p.Resources
		if r == nil {
			continue
		}
		out.ClientCPUSecs += r.ClientCPUSecs
		if r.RelayCPUSecs > 0 || r.RelayPeakRSS > 0 {
			sampled++
			out.RelayCPUSecs, out.RelayPeakRSS, out.RelayDataBytes, out.Series = r.RelayCPUSecs, r.RelayPeakRSS, r.RelayDataBytes, r.Series
		}
	}
	if sampled > 1 {
		// Several segments sampled "the" relay: they started their own
		// (merged with --force); no one figure describes them.
		out.RelayCPUSecs, out.RelayPeakRSS, out.RelayDataBytes, out.Series = 0, 0, 0, nil
	}
	if len(phs) == 1 && phs[0].Resources != nil {
		return phs[0].Resources
	}
	return out
}

// mergeAccounts adds the accounts by operation, in first-seen order.
func mergeAccounts(phs []*results.Phase) []results.Account {
	var out []results.Account
	at := map[string]int{}
	for _, p := range phs {
		for _, a := range p.Accounts {
			i, ok := at[a.Op]
			if !ok {
				at[a.Op] = len(out)
				out = append(out, results.Account{Op: a.Op})
				i = len(out) - 1
			}
			out[i].Add(a)
		}
	}
	return out
}

// segmentArgs is segment 0's command line as it ran it (its --segment
// 0/N too, so that the line pasted into a shell runs a real segment),
// without the flags naming its own output (--json seg0.json, --out DIR,
// --junit FILE): they differ by segment, and a pasted line must not
// overwrite segment 0's file. The Merged line says which other segments
// ran it (report: mergedLines).
func segmentArgs(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, _, eq := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch {
		case !strings.HasPrefix(a, "-") || !segmentOutput[name]:
			out = append(out, a)
		case !eq:
			i++ // and its value
		}
	}
	return out
}

// segmentList names the N segments' --segment values ("0/2, 1/2"; past
// five, "0/9 to 8/9").
func segmentList(n int) string {
	if n > 5 {
		return fmt.Sprintf("0/%d to %d/%d", n, n-1, n)
	}
	is := make([]string, n)
	for i := range is {
		is[i] = fmt.Sprintf("%d/%d", i, n)
	}
	return strings.Join(is, ", ")
}

// segmentOutput are the flags naming a segment's own output files.
var segmentOutput = map[string]bool{"json": true, "out": true, "junit": true}
