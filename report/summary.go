package report

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/relaybench/relaybench/internal/safe"
	"github.com/relaybench/relaybench/outcome"
	"github.com/relaybench/relaybench/results"
)

// Summary writes the terminal summary of f: what was run, on what and when,
// then for each run the reference suite's "Publish Performance:" and "Query
// Performance:" blocks, extended with acceptance, refusals, timeouts, latency
// percentiles, query shapes, verification and client CPU, and a generic block
// for every other phase. A file with several runs ends with the comparison
// tables.
func Summary(w io.Writer, f *results.File) error {
	bw := bufio.NewWriter(&inertWriter{w: w}) // no string in it acts on the terminal
	fmt.Fprintln(bw, "=== Benchmark Results ===")
	fmt.Fprintln(bw)
	writeHeader(bw, []*results.File{f}, "  ")
	for i := range f.Runs {
		r := &f.Runs[i]
		fmt.Fprintln(bw)
		if len(f.Runs) > 1 {
			rep := ""
			if r.Repeat > 0 {
				rep = fmt.Sprintf(", repeat %d", r.Repeat)
			}
			fmt.Fprintf(bw, "--- Run %d of %d: %s%s ---\n\n", i+1, len(f.Runs), relayKey(&r.Relay), rep)
		}
		summaryRun(bw, r)
	}
	if len(f.Runs) > 1 {
		fmt.Fprintln(bw)
		fmt.Fprintln(bw, "=== Comparison ===")
		for _, t := range tables([]*results.File{f}) {
			fmt.Fprintln(bw)
			fmt.Fprintf(bw, "%s:\n", t.title)
			t.text(bw, "  ")
		}
	}
	writeThresholds(bw, f)
	writeVerdict(bw, f)
	return bw.Flush()
}

// writeVerdict ends the summary with the run's one judgement.
func writeVerdict(w io.Writer, f *results.File) {
	v := f.Verdict
	if v == nil {
		return
	}
	fmt.Fprintln(w)
	if v.Status == 0 {
		fmt.Fprintln(w, "Verdict: PASSED (exit 0): all requested work ran and every check passed")
		return
	}
	fmt.Fprintf(w, "Verdict: %s (exit %d)\n", strings.ToUpper(v.Outcome), v.Status)
	for i, r := range v.Reasons {
		if i == 12 {
			fmt.Fprintf(w, "  … and %d more\n", len(v.Reasons)-12)
			break
		}
		fmt.Fprintf(w, "  - %s\n", r)
	}
}

// writeHeader states what was run, with what, on what and when.
func writeHeader(w io.Writer, files []*results.File, indent string) {
	for i, f := range files {
		if len(files) > 1 {
			fmt.Fprintf(w, "File %d:\n", i+1)
		}
		for _, l := range headerLines(f) {
			fmt.Fprintf(w, "%s%-9s %s\n", indent, l[0]+":", l[1])
		}
	}
}

// headerLines are the (label, text) lines describing a results file.
func headerLines(f *results.File) [][2]string {
	var ls [][2]string
	cmd := "relaybench " + f.Command
	if len(f.Args) > 0 {
		cmd = "relaybench " + strings.Join(f.Args, " ")
	}
	ls = append(ls, [2]string{"Command", cmd})
	tool := f.Tool.Name + " " + f.Tool.Version
	var extra []string
	if f.Tool.Commit != "" {
		extra = append(extra, "commit "+f.Tool.Commit)
	}
	if f.Tool.GoVersion != "" {
		extra = append(extra, f.Tool.GoVersion)
	}
	if f.Tool.Signer != "" {
		extra = append(extra, "signer "+f.Tool.Signer)
	}
	if len(extra) > 0 {
		tool += " (" + strings.Join(extra, ", ") + ")"
	}
	ls = append(ls, [2]string{"Tool", strings.TrimSpace(tool)})
	ls = append(ls, [2]string{"Machine", machineLine(&f.Machine)})
	if m := f.Merged; m != nil {
		ls = append(ls, mergedLines(m)...)
	}
	when := fmtTime(f.StartedAt)
	if !f.FinishedAt.IsZero() && !f.StartedAt.IsZero() {
		when += " to " + fmtTime(f.FinishedAt) + " (" + f.FinishedAt.Sub(f.StartedAt).Round(time.Second).String() + ")"
	}
	if f.Interrupted {
		when += " — INTERRUPTED: figures cover the time until the stop"
	}
	ls = append(ls, [2]string{"When", when})
	seen := map[string]bool{}
	for i := range f.Runs {
		r := &f.Runs[i]
		if k := relayKey(&r.Relay); !seen["relay "+k] {
			seen["relay "+k] = true
			ls = append(ls, [2]string{"Relay", relayLine(&r.Relay)})
		}
		if c := corpusLine(&r.Corpus); !seen["corpus "+c] && !checksOnly(r) {
			seen["corpus "+c] = true
			ls = append(ls, [2]string{"Corpus", c})
		}
		if p := paramsLine(r.Params); p != "" && !seen["params "+p] {
			seen["params "+p] = true
			ls = append(ls, [2]string{"Params", p})
		}
		if s := segmentLine(r.Segment); s != "" && !seen["segment "+s] {
			seen["segment "+s] = true
			ls = append(ls, [2]string{"Segment", s})
		}
	}
	return ls
}

// checksOnly reports whether r ran conformance checks alone: they sign
// fresh events of their own, so r has no corpus to describe.
func checksOnly(r *results.Run) bool {
	return len(r.Phases) == 0 && len(r.Conformance) > 0 && r.Corpus.Events == 0
}

func machineLine(m *results.Machine) string {
	parts := []string{m.OS + "/" + m.Arch}
	if m.Cores > 0 {
		parts = append(parts, fmt.Sprintf("%d cores", m.Cores))
	}
	if m.CPUModel != "" {
		parts = append(parts, m.CPUModel)
	}
	if m.MemBytes > 0 {
		parts = append(parts, fmtBytes(float64(m.MemBytes))+" RAM")
	}
	if m.Kernel != "" {
		parts = append(parts, "kernel "+m.Kernel)
	}
	if m.Hostname != "" {
		parts = append(parts, "host "+m.Hostname)
	}
	return strings.Join(parts, ", ")
}

func relayLine(r *results.Relay) string {
	s := r.URL
	if r.Name != "" {
		s = r.Name + " " + r.URL
	}
	sw := strings.TrimSpace(r.Software + " " + r.Version)
	if sw == "" {
		sw = "software unknown (no NIP-11)"
	}
	s += " (" + sw
	if r.Managed {
		s += ", started by relaybench"
	}
	return s + ")"
}

func corpusLine(c *results.Corpus) string {
	s := fmt.Sprintf("%s events, %s authors, average content %s B, seed %d", fmtInt(int64(c.Events)), fmtInt(int64(c.Authors)), fmtInt(int64(c.AvgSize)), c.Seed)
	if c.Source != "" {
		// A dump: its own authors; seed and keys only sign fresh events.
		s = fmt.Sprintf("%s events from %s by %s authors, average content %s B", fmtInt(int64(c.Events)), safe.Line(c.Source), fmtInt(int64(c.Authors)), fmtInt(int64(c.AvgSize)))
	}
	if c.Fingerprint != "" {
		s += ", fingerprint " + safe.Line(c.Fingerprint)
	}
	if len(c.Dropped) > 0 {
		var d []string
		for _, k := range sortedKeys(c.Dropped) {
			d = append(d, fmt.Sprintf("%d %s", c.Dropped[k], safe.Line(k)))
		}
		s += " (of " + fmtInt(int64(c.Read)) + " read; dropped " + strings.Join(d, ", ") + ")"
	}
	if c.Bytes > 0 {
		s += ", " + fmtBytes(float64(c.Bytes)) + " on the wire"
	}
	if c.Cached {
		s += ", from cache"
	}
	return s
}

func paramsLine(p map[string]any) string {
	var parts []string
	for _, k := range sortedKeys(p) {
		parts = append(parts, fmt.Sprintf("%s=%v", k, p[k]))
	}
	return strings.Join(parts, " ")
}

// summaryRun writes the blocks of one run.
func summaryRun(w io.Writer, r *results.Run) {
	if r.Skipped != "" {
		fmt.Fprintf(w, "SKIPPED: %s\n", r.Skipped)
	}
	for i := range r.Phases {
		p := &r.Phases[i]
		if isSweepPhase(p.Name) {
			continue // in the sweep table below
		}
		switch {
		case p.Name == "publish" || (kind(p) == "publish" && !isSweepPhase(p.Name)):
			summaryPublish(w, p)
		case p.Name == "query" || kind(p) == "query":
			summaryQuery(w, p)
		default:
			summaryGeneric(w, p)
		}
		fmt.Fprintln(w)
	}
	if pts := sweep(r); len(pts) > 0 {
		t := sweepTable([]*relayRuns{{key: relayKey(&r.Relay), runs: []*results.Run{r}}})
		fmt.Fprintln(w, "Payload Sweep:")
		t.text(w, "  ")
		for _, pt := range pts {
			for _, e := range pt.p.Errors {
				fmt.Fprintf(w, "  ERROR (%s): %s\n", pt.p.Name, e)
			}
			for _, n := range pt.p.Notes {
				fmt.Fprintf(w, "  Note (%s): %s\n", pt.p.Name, n)
			}
		}
		fmt.Fprintln(w)
	}
	writeCheckText(w, r) // conformance.go
	for _, e := range r.Errors {
		fmt.Fprintf(w, "ERROR: %s\n", e)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "Note: %s\n", n)
	}
}

// kv prints "  Label: value".
func kv(w io.Writer, label, value string) { fmt.Fprintf(w, "  %s: %s\n", label, value) }

func cnt(m map[string]int64, k string) string {
	if v, ok := m[k]; ok {
		return fmtInt(v)
	}
	return dash
}

func phaseHeading(p *results.Phase, def string) string {
	h := def
	if p.Name != strings.ToLower(strings.Fields(def)[0]) {
		h = fmt.Sprintf("%s (%s)", title(p.Name), p.Workload)
		if p.Workload == "" {
			h = title(p.Name)
		}
	}
	return h + ":"
}

func summaryPublish(w io.Writer, p *results.Phase) {
	fmt.Fprintln(w, phaseHeading(p, "Publish Performance"))
	used := map[string]bool{results.CountSent: true, results.CountAccepted: true, results.CountRefused: true,
		results.CountTimedOut: true, results.CountFailed: true, results.CountBytesSent: true}
	pub := cnt(p.Counts, results.CountAccepted) + " accepted of " + cnt(p.Counts, results.CountSent) + " sent"
	if a, ok := p.Counts[results.CountAccepted]; ok {
		if s, ok := p.Counts[results.CountSent]; ok && s > 0 {
			// Truncated, not rounded: 99,998 of 100,000 is never "100.00%".
			pub += " (" + fmtFloat(math.Floor(float64(a)/float64(s)*1e4)/100, 2) + "%)"
		}
	}
	kv(w, "Events Published", pub)
	ref := cnt(p.Counts, results.CountRefused)
	if len(p.Refused) > 0 {
		var parts []string
		for _, k := range sortedKeys(p.Refused) {
			parts = append(parts, fmt.Sprintf("%s %s", k, fmtInt(p.Refused[k])))
		}
		ref += " (" + strings.Join(parts, ", ") + ")"
	}
	kv(w, "Refused", ref)
	kv(w, "Timed Out", cnt(p.Counts, results.CountTimedOut))
	kv(w, "Failed", cnt(p.Counts, results.CountFailed))
	if b, ok := p.Counts[results.CountBytesSent]; ok {
		kv(w, "Total Data", fmtBytes(float64(b)))
	} else {
		kv(w, "Total Data", dash)
	}
	writeDuration(w, p)
	if v, ok := p.Rates[results.RateEvents]; ok {
		kv(w, "Rate", fmtFloat(v, 2)+" events/second")
	} else {
		kv(w, "Rate", dash)
	}
	if v, ok := bandwidth(p); ok {
		kv(w, "Bandwidth", fmtFloat(v, 2)+" MB/second")
	} else {
		kv(w, "Bandwidth", dash)
	}
	used[results.RateEvents], used[results.RateMB] = true, true
	writeLatencies(w, p.Latency)
	writeOther(w, p, used)
	writeRest(w, p)
}

func summaryQuery(w io.Writer, p *results.Phase) {
	fmt.Fprintln(w, phaseHeading(p, "Query Performance"))
	used := map[string]bool{results.CountQueries: true, results.CountEventsReturned: true, results.RateQueries: true,
		results.CountFailed: true, results.CountTimedOut: true}
	kv(w, "Queries Executed", cnt(p.Counts, results.CountQueries))
	kv(w, "Events Returned", cnt(p.Counts, results.CountEventsReturned))
	kv(w, "Failed", cnt(p.Counts, results.CountFailed))
	kv(w, "Timed Out", cnt(p.Counts, results.CountTimedOut))
	writeDuration(w, p)
	if v, ok := p.Rates[results.RateQueries]; ok {
		kv(w, "Rate", fmtFloat(v, 2)+" queries/second")
	} else {
		kv(w, "Rate", dash)
	}
	if v, ok := avgPerQuery(p.Counts); ok {
		kv(w, "Avg Events/Query", fmtFloat(v, 2))
	} else {
		kv(w, "Avg Events/Query", dash)
	}
	writeLatencies(w, p.Latency)
	writeOther(w, p, used)
	writeRest(w, p)
}

// writeRest ends every phase's summary: its groups, verification,
// resources and the tail.
func writeRest(w io.Writer, p *results.Phase) {
	writeGroups(w, p)
	writeVerification(w, p.Verification)
	writeResources(w, p)
	writeTail(w, p)
}

func summaryGeneric(w io.Writer, p *results.Phase) {
	h := title(p.Name)
	if p.Workload != "" && p.Workload != p.Name {
		h += " (" + p.Workload + ")"
	}
	fmt.Fprintln(w, h+" Performance:")
	writeDuration(w, p)
	writeOther(w, p, nil)
	writeLatencies(w, p.Latency)
	writeRest(w, p)
}

func writeDuration(w io.Writer, p *results.Phase) {
	if p.Duration > 0 {
		kv(w, "Duration", fmtDur(float64(p.Duration)))
	} else {
		kv(w, "Duration", dash)
	}
}

// writeOther prints the counters and rates not already printed.
func writeOther(w io.Writer, p *results.Phase, used map[string]bool) {
	for _, k := range sortedKeys(p.Counts) {
		// The headline figures come first, always; after them only what
		// happened: a zero counter is in the results file, not here.
		if used[k] || p.Counts[k] == 0 {
			continue
		}
		label, v := countLine(k, p.Counts[k])
		kv(w, label, v)
	}
	if used == nil && len(p.Refused) > 0 {
		var parts []string
		for _, k := range sortedKeys(p.Refused) {
			parts = append(parts, fmt.Sprintf("%s %s", k, fmtInt(p.Refused[k])))
		}
		kv(w, "Refused by reason", strings.Join(parts, ", "))
	}
	for _, k := range sortedKeys(p.Rates) {
		if used[k] {
			continue
		}
		label, unit := rateLabel(k)
		kv(w, label, strings.TrimSpace(fmtFloat(p.Rates[k], 2)+" "+unit))
	}
}

// countLine is a counter as the summary prints it: bytes, and times kept
// in ns or µs (keys ending _ns, _us), in human units under a label
// without the unit.
func countLine(k string, n int64) (label, value string) {
	switch {
	case k == "canceled", k == "ops_canceled": // load's spelling, kept in its results files
		return title(humanName(strings.Replace(k, "canceled", "cancelled", 1))), fmtInt(n)
	case strings.HasPrefix(k, "bytes_"):
		return title(humanName(k)), fmtBytes(float64(n))
	case strings.HasSuffix(k, "_ns"):
		return title(humanName(strings.TrimSuffix(k, "_ns"))), fmtDur(float64(n))
	case strings.HasSuffix(k, "_us"):
		return title(humanName(strings.TrimSuffix(k, "_us"))), fmtDur(float64(n) * 1e3)
	case strings.Contains(k, "_us_"): // client_cpu_us_p50
		return title(humanName(strings.Replace(k, "_us_", "_", 1))), fmtDur(float64(n) * 1e3)
	}
	return title(humanName(k)), fmtInt(n)
}

// writeLatencies prints p50/p90/p99/p99.9/max of every latency, the
// primary one first.
func writeLatencies(w io.Writer, lat map[string]*results.Histogram) {
	names := sortedKeys(lat)
	prim := results.PrimaryLatency(lat)
	sort.SliceStable(names, func(i, j int) bool { return names[i] == prim && names[j] != prim })
	for _, n := range names {
		h := lat[n]
		if h == nil || h.Count == 0 {
			kv(w, title(latencyLabel(n))+" Latency", dash+" (no samples)")
			continue
		}
		var parts []string
		for _, q := range []float64{50, 90, 99, 99.9} {
			s := dash
			if v, ok := latQ(h, q); ok {
				s = fmtDur(float64(v))
			}
			parts = append(parts, fmt.Sprintf("p%g %s", q, s))
		}
		parts = append(parts, "max "+fmtDur(float64(h.Max)), "mean "+fmtDur(h.Mean), "n "+fmtInt(h.Count))
		kv(w, title(latencyLabel(n))+" Latency", strings.Join(parts, "  "))
	}
}

func writeGroups(w io.Writer, p *results.Phase) {
	if len(p.Groups) == 0 || p.Name == "sweep" {
		return
	}
	t := groupTable(p.Name, []*relayRuns{{key: "-", runs: []*results.Run{{Phases: []results.Phase{*p}}}}})
	if t == nil {
		return
	}
	// Drop the relay column: the block is already about one relay.
	t.head = t.head[1:]
	left := map[int]bool{}
	for i := range t.left {
		if i > 0 {
			left[i-1] = true
		}
	}
	t.left = left
	for i := range t.rows {
		t.rows[i] = t.rows[i][1:]
	}
	fmt.Fprintf(w, "  %s:\n", t.title)
	t.text(w, "    ")
}

func writeVerification(w io.Writer, v *results.Verification) {
	if v == nil {
		return
	}
	switch {
	case v.Status() == results.VerificationNotVerified:
		kv(w, "Verification", "NOT VERIFIED: no answer was checked")
	case !v.Verified:
		kv(w, "Verification", verdict(v)+": validity and filter match only")
		fmt.Fprintf(w, "    checked %s, returned %s, not matching %s, invalid %s, duplicated %s, misordered %s\n",
			fmtInt(v.Checked), fmtInt(v.Returned), fmtInt(v.NotMatching), fmtInt(v.Invalid), fmtInt(v.Duplicated), fmtInt(v.Misordered))
	default:
		kv(w, "Verification", verdict(v))
		fmt.Fprintf(w, "    checked %s, expected %s, returned %s, missing %s, extra %s, not matching %s, invalid %s, duplicated %s, misordered %s, truncated %s\n",
			fmtInt(v.Checked), fmtInt(v.Expected), fmtInt(v.Returned), fmtInt(v.Missing), fmtInt(v.Extra),
			fmtInt(v.NotMatching), fmtInt(v.Invalid), fmtInt(v.Duplicated), fmtInt(v.Misordered), fmtInt(v.Truncated))
	}
	for _, n := range v.Notes {
		fmt.Fprintf(w, "    %s\n", n)
	}
}

func writeResources(w io.Writer, p *results.Phase) {
	r := p.Resources
	if r == nil {
		return
	}
	var relay []string
	if r.RelayCPUSecs > 0 {
		relay = append(relay, "CPU "+fmtFloat(r.RelayCPUSecs, 2)+" s")
	}
	if r.RelayPeakRSS > 0 {
		relay = append(relay, "peak RSS "+fmtBytes(float64(r.RelayPeakRSS)))
	}
	if r.RelayDataBytes > 0 {
		relay = append(relay, "data "+fmtBytes(float64(r.RelayDataBytes)))
		if a := p.Counts[results.CountAccepted]; a > 0 && kind(p) == "publish" {
			relay = append(relay, fmtFloat(float64(r.RelayDataBytes)/float64(a), 0)+" B per stored event")
		}
	}
	if len(relay) > 0 {
		kv(w, "Relay Resources", strings.Join(relay, ", "))
	}
	c := fmtFloat(r.ClientCPUSecs, 2) + " s"
	if r.ClientCPUUtil > 0 {
		c += " (" + fmtPct(r.ClientCPUUtil) + " of usable cores)"
	}
	kv(w, "Client CPU", c)
	writeSegmentResources(w, p)
}

func writeTail(w io.Writer, p *results.Phase) {
	for _, a := range p.Accounts {
		kv(w, "Outcomes", outcome.Split(a))
	}
	if p.Aborted != "" {
		fmt.Fprintf(w, "  STOPPED EARLY: %s\n", p.Aborted)
	}
	if p.ClientLimited {
		fmt.Fprintln(w, "  WARNING: client-limited: the client, not the relay, limited these figures")
	}
	if v := p.Verification; v != nil && v.Status() == results.VerificationNotVerified {
		fmt.Fprintln(w, "  WARNING: NOT VERIFIED: no answer was checked, so the requested verification did not happen")
	}
	if v := p.Verification; v != nil && v.Status() == results.VerificationFailed {
		if v.Verified {
			fmt.Fprintln(w, "  WARNING: verification FAILED: the relay's answers did not match what it accepted")
		} else {
			fmt.Fprintln(w, "  WARNING: verification FAILED: the relay sent invalid, non-matching or duplicated events")
		}
	}
	for _, e := range p.Errors {
		fmt.Fprintf(w, "  ERROR: %s\n", e)
	}
	for _, n := range p.Notes {
		fmt.Fprintf(w, "  Note: %s\n", n)
	}
}

// rateLabel names a rate for the summary: "deliveries_per_sec" →
// ("Deliveries Rate", "deliveries/second"), "mb_per_sec" → ("Bandwidth",
// "MB/second"); a name without "_per_sec" ("events_per_query") has no unit.
func rateLabel(k string) (label, unit string) {
	if k == results.RateMB {
		return "Bandwidth", "MB/second"
	}
	base, ok := strings.CutSuffix(k, "_per_sec")
	if !ok {
		return title(humanName(k)), "" // a ratio, not a rate: no unit to add
	}
	return title(humanName(base)) + " Rate", humanName(base) + "/second"
}
