package report

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/relaybench/relaybench/internal/numfmt"
	"github.com/relaybench/relaybench/internal/safe"
	"github.com/relaybench/relaybench/internal/shellword"
	"github.com/relaybench/relaybench/outcome"
	"github.com/relaybench/relaybench/results"
)

// Summary writes the full terminal summary of f: what was run, on what and
// when, then for each run the reference suite's "Publish Performance:" and
// "Query Performance:" blocks, extended with acceptance, refusals, timeouts,
// latency percentiles, query shapes, verification and client CPU, and a
// generic block for every other phase. A file with several runs ends with
// the comparison tables.
func Summary(w io.Writer, f *results.File) error {
	return WriteSummary(w, f, SummaryOptions{})
}

// SummaryOptions choose how much the terminal summary shows.
type SummaryOptions struct {
	// Brief leads with the verdict and shows what a reader needs at a
	// glance: what was run on which relay, each phase's headline figures
	// (counts, rate, primary latency, verification), counters that
	// happened, warnings, errors and notes. The tool, machine, parameters,
	// other latencies and rates, byte counts and resources are left to the
	// full summary (-v) and the results file.
	Brief bool
	// SaidSkips names the relays whose skip the command told, why and
	// all, in the first lines of the output the summary goes to
	// (compare's "strfry will be skipped: …"): the summary names them
	// skipped "as said at the start" instead of telling why again.
	SaidSkips map[string]bool
}

// summaryOut is the summary's writer; brief says which summary it writes.
type summaryOut struct {
	*bufio.Writer
	brief    bool
	compared bool   // the file has several runs: its comparison tables follow the runs' blocks
	corpus   string // brief: the run's corpus note, given as the header's Corpus line
	tail     [2]byte
	skips    skipTeller // where the summary tells why a relay was skipped
}

// Write and WriteString keep the last two bytes written (tail), so that
// blankLine knows whether a blank line ends what was written.
func (s *summaryOut) Write(p []byte) (int, error) {
	s.keepTail(string(p[max(0, len(p)-2):]))
	return s.Writer.Write(p)
}

func (s *summaryOut) WriteString(p string) (int, error) {
	s.keepTail(p[max(0, len(p)-2):])
	return s.Writer.WriteString(p)
}

func (s *summaryOut) keepTail(end string) {
	for i := 0; i < len(end); i++ {
		s.tail = [2]byte{s.tail[1], end[i]}
	}
}

// blankLine puts one blank line after what w holds so far, never a
// second: the blocks before the hint and the verdict end with one or not
// (a compare's tables did not; a conformance block did, and got two).
func blankLine(w io.Writer) {
	if s, ok := w.(*summaryOut); ok && s.tail == [2]byte{'\n', '\n'} {
		return
	}
	fmt.Fprintln(w)
}

// isBrief reports whether w writes the brief summary.
func isBrief(w io.Writer) bool {
	s, ok := w.(*summaryOut)
	return ok && s.brief
}

// WriteSummary writes the summary of f as o says (Summary: the full one).
func WriteSummary(w io.Writer, f *results.File, o SummaryOptions) error {
	bw := &summaryOut{Writer: bufio.NewWriter(&inertWriter{w: w}), brief: o.Brief, compared: len(f.Runs) > 1, // no string in it acts on the terminal
		skips: skipTeller{f: f, said: o.SaidSkips}}
	if o.Brief {
		bw.corpus = corpusNote(f)
	}
	// The verdict leads, as the commands' own summaries do.
	if v := f.Verdict; v != nil {
		fmt.Fprintf(bw, "=== Benchmark Results: %s (exit %d) ===\n", strings.ToUpper(v.Outcome), v.Status)
	} else {
		fmt.Fprintln(bw, "=== Benchmark Results ===")
	}
	fmt.Fprintln(bw)
	writeHeader(bw, []*results.File{f}, "  ")
	for i := range f.Runs {
		r := &f.Runs[i]
		if len(f.Runs) == 1 && emptyRun(r) {
			break // nothing ran: the header and the verdict say it all
		}
		blankLine(bw) // a run's block ends with one already: one blank line, never two
		if len(f.Runs) > 1 {
			rep := ""
			if r.Repeat > 0 {
				rep = fmt.Sprintf(", repeat %d", r.Repeat)
			}
			fmt.Fprintf(bw, "--- Run %d of %d: %s%s ---\n\n", i+1, len(f.Runs), relayKey(&r.Relay), rep)
		}
		summaryRun(bw, r, bw.skips)
	}
	if len(f.Runs) > 1 {
		blankLine(bw)
		fmt.Fprintln(bw, "=== Comparison ===")
		for _, t := range tables([]*results.File{f}) {
			if o.Brief && t.title != "Relays" {
				briefColumns(t)
			}
			fmt.Fprintln(bw)
			fmt.Fprintf(bw, "%s:\n", t.title)
			t.text(bw, "  ")
		}
	}
	writeThresholds(bw, f)
	writeHint(bw, f, o.Brief)
	writeVerdict(bw, f, bw.skips)
	return bw.Flush()
}

// writeHint says what the full summary (-v) adds to the brief one: each
// phase's every figure, or, for checks alone (conformance), the tool,
// machine, times and parameters.
func writeHint(w io.Writer, f *results.File, brief bool) {
	switch {
	case !brief:
	case slices.ContainsFunc(f.Runs, func(r results.Run) bool { return len(r.Phases) > 0 }):
		blankLine(w)
		fmt.Fprintln(w, "(-v shows every counter, rate, latency, resource and parameter; all are in the results file)")
	case slices.ContainsFunc(f.Runs, func(r results.Run) bool { return len(r.Conformance) > 0 }):
		blankLine(w)
		fmt.Fprintln(w, "(-v shows the tool, machine, times and parameters; all are in the results file)")
	}
}

// emptyRun reports whether r has nothing for its block: no phase, check,
// error, note or skip (a run that ended before it began).
func emptyRun(r *results.Run) bool {
	return len(r.Phases) == 0 && len(r.Conformance) == 0 && len(r.Errors) == 0 && len(r.Notes) == 0 && r.Skipped == ""
}

// writeVerdict ends the summary with the run's one judgement; skips says
// how it lists a skip told at the start.
func writeVerdict(w io.Writer, f *results.File, skips skipTeller) {
	v := f.Verdict
	if v == nil {
		return
	}
	blankLine(w)
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
		fmt.Fprintf(w, "  - %s\n", skips.reason(r))
	}
}

// writeHeader states what was run, with what, on what and when.
func writeHeader(w io.Writer, files []*results.File, indent string) {
	for i, f := range files {
		if len(files) > 1 {
			fmt.Fprintf(w, "File %d:\n", i+1)
		}
		skips := skipTeller{f: f}
		if s, ok := w.(*summaryOut); ok {
			skips = s.skips
		}
		for _, l := range headerLinesTold(f, skips) {
			if isBrief(w) && briefHides(l[0], f) {
				continue
			}
			if n := headerCorpus(w); l[0] == corpusHeaderLine(f) && n != "" {
				l[1] = strings.TrimPrefix(n, corpusNotePrefix) // says what was published: the note, once
			}
			fmt.Fprintf(w, "%s%-9s %s\n", indent, l[0]+":", l[1])
		}
	}
}

// corpusNotePrefix starts a run's note saying what its corpus was when the
// run published fresh events ("corpus: the 240 fresh events published
// (…); the key corpus (…) only provided the signing keys").
const corpusNotePrefix = "corpus: "

// corpusNote is the corpus note the brief summary of f gives as its
// header's Corpus line (or Events line: fresh events only, as conformance
// --under-load's): its one run's, when the header has that line; ""
// otherwise.
func corpusNote(f *results.File) string {
	if len(f.Runs) != 1 || corpusHeaderLine(f) == "" {
		return ""
	}
	for _, n := range f.Runs[0].Notes {
		if strings.HasPrefix(n, corpusNotePrefix) {
			return n
		}
	}
	return ""
}

// corpusHeaderLine is the header line of f that says what was published,
// "Corpus", else "Events" (a run that published fresh events only), ""
// when it has neither.
func corpusHeaderLine(f *results.File) string {
	line := ""
	for _, l := range headerLines(f) {
		switch {
		case l[0] == "Corpus":
			return l[0]
		case l[0] == "Events" && line == "":
			line = l[0]
		}
	}
	return line
}

// reportHeaderLines are f's header lines as the Markdown and HTML reports
// give them: the Corpus (or Events) line says what was published as the
// terminal's summary does (corpusNote), not a generated corpus's average.
// A skipped relay's Relay line points to the verdict when the verdict
// (which these reports open with) says why.
func reportHeaderLines(f *results.File) [][2]string {
	ls := headerLinesTold(f, skipTeller{f: f})
	n, label := corpusNote(f), corpusHeaderLine(f)
	if n == "" {
		return ls
	}
	for i := range ls {
		if ls[i][0] == label {
			ls[i][1] = strings.TrimPrefix(n, corpusNotePrefix)
			break
		}
	}
	return ls
}

// headerCorpus is the corpus note w gives as its header's Corpus line
// (and not again after the run), "" when none.
func headerCorpus(w io.Writer) string {
	if s, ok := w.(*summaryOut); ok {
		return s.corpus
	}
	return ""
}

// briefHides reports whether the brief summary leaves out the header line
// labelled label: the tool, machine and parameters, and the time unless the
// run was interrupted.
func briefHides(label string, f *results.File) bool {
	switch label {
	case "Tool", "Machine", "Params":
		return true
	case "When":
		return !f.Interrupted
	}
	return false
}

// headerLines are the (label, text) lines describing a results file, a
// skipped relay's Relay line with why.
func headerLines(f *results.File) [][2]string { return headerLinesTold(f, skipTeller{}) }

// headerLinesTold are headerLines, a skipped relay's Relay line telling
// why or where the output does (skips).
func headerLinesTold(f *results.File, skips skipTeller) [][2]string {
	var ls [][2]string
	cmd := "relaybench " + f.Command
	if len(f.Args) > 0 {
		cmd = "relaybench " + shellword.Join(f.Args) // pastes back into a shell
	}
	ls = append(ls, [2]string{"Command", safe.Inert(cmd)})
	tool := f.Tool.Name + " " + toolVersion(f.Tool.Version)
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
	if f.Merged != nil {
		ls = append(ls, mergedLines(f)...)
	}
	when := fmtTime(f.StartedAt)
	if !f.FinishedAt.IsZero() && !f.StartedAt.IsZero() {
		when += " to " + fmtTime(f.FinishedAt) + " (" + fmtDur(float64(f.FinishedAt.Sub(f.StartedAt))) + ")"
	}
	if f.Interrupted {
		when += " — " + interruptedWhen(f)
	}
	ls = append(ls, [2]string{"When", when})
	// Every relay first, then what the runs shared (corpus, params): a
	// compare's header lists its relays together.
	var rest [][2]string
	seen := map[string]bool{}
	for i := range f.Runs {
		r := &f.Runs[i]
		if r.Skipped != "" && len(r.Phases) == 0 && len(r.Conformance) == 0 {
			// Nothing ran: no software, corpus or params to describe.
			ls = append(ls, [2]string{"Relay", skips.relayLine(r)})
			continue
		}
		if k := relayKey(&r.Relay); !seen["relay "+k] {
			seen["relay "+k] = true
			if l := relayLineOf(f, r); l != "" {
				ls = append(ls, [2]string{"Relay", l})
			}
		}
		if e := freshLine(r); e != "" {
			if !seen["events "+e] {
				seen["events "+e] = true
				rest = append(rest, [2]string{"Events", e})
			}
		} else if c := corpusLine(&r.Corpus) + notPublished(r); !seen["corpus "+c] && !checksOnly(r) && !noCorpus(r) {
			seen["corpus "+c] = true
			rest = append(rest, [2]string{"Corpus", c})
			if e := mixedFreshLine(r); e != "" {
				rest = append(rest, [2]string{"Events", e})
			}
		}
		if p := paramsLine(r.Params); p != "" && !seen["params "+p] {
			seen["params "+p] = true
			rest = append(rest, [2]string{"Params", p})
		}
		if s := segmentLine(r.Segment); s != "" && !seen["segment "+s] {
			seen["segment "+s] = true
			rest = append(rest, [2]string{"Segment", s})
		}
	}
	return append(ls, rest...)
}

// skipWhy is why r was skipped, without the "NAME: skipped: " its
// message may start with (the summary names the relay already).
func skipWhy(r *results.Run) string {
	why := strings.TrimPrefix(r.Skipped, r.Relay.Name+": ")
	if rest, ok := strings.CutPrefix(why, r.Relay.Name+" "); ok && r.Relay.Name != "" {
		why = "it " + rest // a sentence naming the relay: "strfry needs a binary you supply, …"
	}
	return strings.TrimPrefix(why, "skipped: ")
}

// freshLine describes what r published when every phase of it published
// fresh events of its own (load and find-max publishing: signed before the
// clock with the corpus's keys, at the phase's size), not the corpus: the
// corpus line would name events that were never sent. "" otherwise.
func freshLine(r *results.Run) string {
	size := ""
	for i := range r.Phases {
		p := &r.Phases[i]
		if p.Workload != "load" && p.Workload != "find-max" {
			return ""
		}
		if k, ok := p.Params["kind"]; ok && fmt.Sprint(k) != "publish" {
			return ""
		}
		s, ok := p.Params["size"]
		if !ok || (size != "" && fmt.Sprint(s) != size) {
			return ""
		}
		size = fmt.Sprint(s)
	}
	if size == "" {
		return ""
	}
	if n, err := strconv.ParseInt(size, 10, 64); err == nil {
		size = fmtInt(n)
	}
	s := "fresh events signed before the clock, average content " + size + " B"
	if r.Corpus.Source == "" && r.Corpus.Authors > 0 {
		s += fmt.Sprintf(", keys of seed %d (%s authors)", r.Corpus.Seed, fmtInt(int64(r.Corpus.Authors)))
	}
	return s
}

// mixedFreshLine describes the fresh events a load mixing publishes and
// queries published (its queries are drawn from the corpus, which the
// Corpus line describes); "" when r has no such load.
func mixedFreshLine(r *results.Run) string {
	for i := range r.Phases {
		p := &r.Phases[i]
		if s, ok := p.Params["size"]; ok && p.Workload == "load" && fmt.Sprint(p.Params["kind"]) == "mixed" {
			size := fmt.Sprint(s)
			if n, err := strconv.ParseInt(size, 10, 64); err == nil {
				size = fmtInt(n)
			}
			return "the load's publishes: fresh events signed before the clock, average content " + size + " B; its queries ask for the corpus"
		}
	}
	return ""
}

// noCorpus reports whether r neither signed nor loaded a corpus (a run
// that ended before it, as on an unreachable relay): no corpus line.
func noCorpus(r *results.Run) bool {
	return r.Corpus.Events == 0 && r.Corpus.Read == 0 && len(r.Phases) == 0
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

// relayLineOf is the Relay line of run r of f. A run interrupted before
// its first phase may never have started or reached its relay: it names
// the relay without claiming its software ("" when it named none yet, and
// the line is left out).
func relayLineOf(f *results.File, r *results.Run) string {
	if !f.Interrupted || measured(r) {
		return relayLine(&r.Relay)
	}
	s := strings.TrimSpace(r.Relay.Name + " " + r.Relay.URL)
	if s == "" {
		return ""
	}
	return s + ": not measured"
}

// measured reports whether r has anything measured: a phase or a check.
func measured(r *results.Run) bool {
	return len(r.Phases) > 0 || len(r.Conformance) > 0
}

// interruptedWhen says, after the When line's times, that the run was
// interrupted, and what its figures cover.
func interruptedWhen(f *results.File) string {
	for i := range f.Runs {
		if measured(&f.Runs[i]) {
			return "INTERRUPTED: figures cover the time until the stop"
		}
	}
	return "INTERRUPTED before anything was measured"
}

func relayLine(r *results.Relay) string {
	s := r.URL
	if r.Name != "" {
		s = r.Name + " " + r.URL
	}
	sw := strings.TrimSpace(r.Software + " " + r.Version)
	if r.Build != "" {
		// The catalog's pinned versions first; the relay's own claim after.
		if sw == "" {
			sw = "none"
		}
		return s + " (" + r.Build + ", started by relaybench; its NIP-11 says: " + sw + ")"
	}
	if sw == "" {
		sw = "software unknown: no NIP-11 document"
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

// notPublished is what the Corpus line adds when the run did not publish
// the corpus (--skip-publish): the relay's own events answered, and the
// corpus only gave the queries their filters; "" when it was published.
func notPublished(r *results.Run) string {
	if r.Params["skip_publish"] != true {
		return ""
	}
	if slices.ContainsFunc(r.Phases, func(p results.Phase) bool { return p.Workload == "query" }) {
		return "; not published (--skip-publish): it only gave the queries their filters, answered from what the relay already held"
	}
	return "; not published (--skip-publish)"
}

// unsetAtZero are the parameters whose zero means "not set" (the default
// applies, or there is none): load's connections, warm-up and pattern
// shapes.
var unsetAtZero = map[string]bool{"connections": true, "warmup": true, "period": true, "every": true,
	"width": true, "at": true, "steps": true, "max_events": true}

// paramsLine lists the parameters that apply, in words (paramWords): an
// empty one, or one left unset (connections=0 constraints= suite=), is in
// the results file only, and so are load's peak under a constant pattern
// and its mix when it does not mix. Subscribe's and sweep's rate 0 reads
// "closed loop", what its flag says 0 means. A switch is named when on ("force",
// "no req") and left out when off, where it read "force no, no req no".
func paramsLine(p map[string]any) string {
	var parts []string
	for _, k := range sortedKeys(p) {
		v := fmt.Sprint(p[k])
		switch {
		case v == "", unsetAtZero[k] && (v == "0" || v == "0s"), p[k] == false:
			continue
		case p[k] == true:
			parts = append(parts, strings.ReplaceAll(k, "_", " "))
			continue
		case k == "peak" && fmt.Sprint(p["pattern"]) == "constant":
			continue
		case k == "rate" && v == "0": // subscribe's and sweep's --rate 0
			parts = append(parts, "closed loop")
			continue
		case k == "mix" && p["kind"] != nil && fmt.Sprint(p["kind"]) != "mixed":
			continue
		}
		parts = append(parts, paramWords(k, paramDuration(p[k])))
	}
	return strings.Join(parts, ", ")
}

// paramWords is one parameter as every report says it, in words rather
// than the results file's key: "publish rate 1,000", "skip preload no",
// "workloads subscribe,lifecycle" (numbers grouped, yes/no for a switch,
// a list as its flag takes it).
func paramWords(k string, v any) string {
	return strings.ReplaceAll(k, "_", " ") + " " + paramValue(v)
}

// paramValue is a parameter's value as paramWords says it.
func paramValue(v any) string {
	switch x := v.(type) {
	case bool:
		if x {
			return "yes"
		}
		return "no"
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1e15 {
			return numfmt.Group(int64(x))
		}
		return strconv.FormatFloat(x, 'f', -1, 64)
	case int:
		return numfmt.Group(int64(x))
	case int64:
		return numfmt.Group(x)
	case []string:
		return strings.Join(x, ",")
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = paramValue(e)
		}
		return strings.Join(parts, ",")
	}
	return fmt.Sprint(v)
}

// summaryRun writes the blocks of one run; skips says where the summary
// tells why a skipped run was skipped (not here again).
func summaryRun(w io.Writer, r *results.Run, skips skipTeller) {
	if r.Skipped != "" {
		fmt.Fprintln(w, skips.runLine(r))
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
		if isBrief(w) && !slices.Contains(t.head, "OK mean") { // a delivery sweep's OK latency: -v's, to fit a terminal
			for _, h := range []string{"OK p99", "OK p50"} {
				t.dropColumn(slices.Index(t.head, h))
			}
		}
		fmt.Fprintln(w, "Payload Sweep:")
		t.text(w, "  ")
		var phases []*results.Phase // "sweep/<bytes>" phases; a "sweep" phase's are in its own block
		for _, pt := range pts {
			if pt.phase != nil {
				phases = append(phases, pt.phase)
			}
		}
		for _, p := range phases {
			for _, e := range p.Errors {
				fmt.Fprintf(w, "  ERROR (%s): %s\n", fmtPayload(float64(p.Size)), e)
			}
		}
		writeSweepNotes(w, phases) // sweepnotes.go
		fmt.Fprintln(w)
	}
	writeCheckText(w, r) // conformance.go
	for _, e := range r.Errors {
		fmt.Fprintf(w, "ERROR: %s\n", e)
	}
	notes := r.Notes
	if headerCorpus(w) != "" {
		notes = slices.DeleteFunc(slices.Clone(notes), func(n string) bool { return strings.HasPrefix(n, corpusNotePrefix) })
	}
	writeNotes(w, "", "Note", notes, "") // brief: the corpus note is the header's Corpus line
}

// unstamped is how a build with no version information names its version
// (sysinfo.Unstamped); the advice after its colon is --version's.
const unstamped = "dev, built without version control information"

// toolVersion is a results file's tool version as the reports show it: a
// build with no version information says so, without --version's advice
// on how to stamp one ("dev, built without version control information:
// go build in a git checkout … stamps the version").
func toolVersion(v string) string {
	if strings.HasPrefix(v, unstamped+":") {
		return unstamped
	}
	return v
}

// kv prints "  Label: value".
func kv(w io.Writer, label, value string) { fmt.Fprintf(w, "  %s: %s\n", label, value) }

// kvHeadline prints a headline counter: always in the full summary, in the
// brief one only when it happened (not zero).
func kvHeadline(w io.Writer, p *results.Phase, label, value, key string) {
	if isBrief(w) && p.Counts[key] == 0 {
		return
	}
	kv(w, label, value)
}

func cnt(m map[string]int64, k string) string {
	if v, ok := m[k]; ok {
		return fmtInt(v)
	}
	return dash
}

func phaseHeading(p *results.Phase, def string) string {
	h := def
	if p.Name != strings.ToLower(strings.Fields(def)[0]) {
		h = phaseName(p) + " Performance" // one style: "Clients (query) Performance:", as "Load/constant Performance:"
	}
	return h + ":"
}

// phaseName is a phase's name with its workload when the name does not
// already say it: "Warm-up (publish)", but "Publish (query corpus)" and
// "Load/constant", not "Publish (query corpus) (publish)".
func phaseName(p *results.Phase) string {
	// "under-load" names its workload already: not "Under-load (load)".
	if p.Workload == "" || strings.HasPrefix(p.Name, p.Workload) || slices.Contains(strings.Split(p.Name, "-"), p.Workload) {
		return title(p.Name)
	}
	return fmt.Sprintf("%s (%s)", title(p.Name), p.Workload)
}

func summaryPublish(w io.Writer, p *results.Phase) {
	fmt.Fprintln(w, phaseHeading(p, "Publish Performance"))
	used := map[string]bool{results.CountSent: true, results.CountAccepted: true, results.CountRefused: true,
		results.CountTimedOut: true, results.CountFailed: true, results.CountBytesSent: true}
	pub := cnt(p.Counts, results.CountAccepted) + " accepted of " + cnt(p.Counts, results.CountSent) + " sent"
	if a, ok := p.Counts[results.CountAccepted]; ok {
		if s, ok := p.Counts[results.CountSent]; ok && s > 0 {
			// Truncated, not rounded: 99,998 of 100,000 is never "100.00%".
			pub += " (" + fmtFloat(math.Floor(float64(a)/float64(s)*1e4)/100, 2) + "%" + cancelledInFlight(p.Counts) + ")"
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
	kvHeadline(w, p, "Refused", ref, results.CountRefused)
	kvHeadline(w, p, "Timed Out", cnt(p.Counts, results.CountTimedOut), results.CountTimedOut)
	kvHeadline(w, p, "Failed", cnt(p.Counts, results.CountFailed), results.CountFailed)
	brief := isBrief(w)
	if b, ok := p.Counts[results.CountBytesSent]; ok && !brief {
		kv(w, "Total Data", fmtBytes(float64(b)))
	} else if !brief {
		kv(w, "Total Data", dash)
	}
	writeDuration(w, p)
	if v, ok := p.Rates[results.RateEvents]; ok {
		kv(w, "Rate", fmtFloat(v, 2)+" events/second")
		// Sent Rate only when it says something Rate does not (refusals).
		used[results.RateSent] = fmtFloat(p.Rates[results.RateSent], 2) == fmtFloat(v, 2)
	} else {
		kv(w, "Rate", dash)
	}
	if v, ok := bandwidth(p); ok && !brief {
		kv(w, "Bandwidth", fmtMiBps(v)+" MiB/s")
	} else if !brief {
		kv(w, "Bandwidth", dash)
	}
	used[results.RateEvents], used[results.RateMB] = true, true
	writeLatencies(w, p)
	writeOther(w, p, used)
	writeRest(w, p)
}

func summaryQuery(w io.Writer, p *results.Phase) {
	fmt.Fprintln(w, phaseHeading(p, "Query Performance"))
	used := map[string]bool{results.CountQueries: true, results.CountEventsReturned: true, results.RateQueries: true,
		results.CountFailed: true, results.CountTimedOut: true}
	kv(w, "Queries Executed", cnt(p.Counts, results.CountQueries))
	kv(w, "Events Returned", cnt(p.Counts, results.CountEventsReturned))
	kvHeadline(w, p, "Failed", cnt(p.Counts, results.CountFailed), results.CountFailed)
	kvHeadline(w, p, "Timed Out", cnt(p.Counts, results.CountTimedOut), results.CountTimedOut)
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
	writeLatencies(w, p)
	writeOther(w, p, used)
	writeRest(w, p)
}

// writeRest ends every phase's summary: its groups, verification,
// resources and the tail.
func writeRest(w io.Writer, p *results.Phase) {
	writeGroups(w, p)
	writeVerification(w, p)
	writeResources(w, p)
	writeTail(w, p)
}

func summaryGeneric(w io.Writer, p *results.Phase) {
	if t, ok := phaseTitles[p.Name]; ok {
		fmt.Fprintln(w, t+":")
	} else {
		fmt.Fprintln(w, phaseName(p)+" Performance:")
	}
	writeDuration(w, p)
	writeMixed(w, p) // mixed.go: nothing for another workload
	writeOther(w, p, nil)
	writeLatencies(w, p)
	writeRecovery(w, p)
	writeRest(w, p)
}

// writeRecovery gives the brief summary burst's recovery times, a headline
// figure the full one lists as a latency and per-burst counters: each
// burst's for a few bursts, else p50 and max.
func writeRecovery(w io.Writer, p *results.Phase) {
	h := p.Latency["recovery"]
	if !isBrief(w) || h == nil || h.Count == 0 {
		return
	}
	var each []string
	for k := 1; k <= 8; k++ {
		if ns, ok := p.Counts["burst_"+strconv.Itoa(k)+"_recovery_ns"]; ok {
			each = append(each, fmt.Sprintf("burst %d %s", k, recoveryDur(ns)))
		}
	}
	if int64(len(each)) == h.Count && h.Count <= 8 {
		kv(w, "Recovery", strings.Join(each, ", "))
		return
	}
	s := dash
	if v, ok := latQ(h, 50); ok {
		s = fmtDur(float64(v))
	}
	kv(w, "Recovery", fmt.Sprintf("p50 %s  max %s  (%s bursts judged)", s, fmtDur(float64(h.Max)), fmtInt(h.Count)))
}

// recoveryDur is one burst's recovery time; the workload stores 1 ns for a
// burst whose first background event after its start was already within
// bounds (the background never slowed), which reads as "at once".
func recoveryDur(ns int64) string {
	if ns <= 1 {
		return "at once"
	}
	return fmtDur(float64(ns))
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
	brief := isBrief(w)
	for _, k := range sortedKeys(p.Counts) {
		// The headline figures come first, always; after them only what
		// happened: a zero counter is in the results file, not here.
		if used[k] || p.Counts[k] == 0 || results.BelowNoise(p.Counts, k) || brief && (detailCount(k) || elsewhere(p, k) || restatesAccepted(p, k) ||
			briefOmits(p, k, float64(p.Counts[k]))) {
			continue
		}
		label, v := countLine(k, p.Counts[k])
		if brief {
			label = briefCountLabel(k, label) // summary_labels.go
		}
		if k == results.CountAccepted && fmt.Sprint(p.Params["kind"]) == "mixed" {
			label = "Events accepted" // a mixed load's: its queries are counted apart
		}
		if k == "dropped" && (p.Workload == "load" || p.Workload == "find-max") {
			label = droppedLabel(p) // the Outcomes line's word for them
		}
		kv(w, label, v)
	}
	if used == nil && len(p.Refused) > 0 {
		var parts []string
		for _, k := range sortedKeys(p.Refused) {
			parts = append(parts, fmt.Sprintf("%s %s", k, fmtInt(p.Refused[k])))
		}
		kv(w, "Refused by reason", strings.Join(parts, ", "))
	}
	shown := map[string]bool{}
	for _, k := range sortedKeys(p.Rates) {
		v := fmtFloat(p.Rates[k], 2)
		if used[k] || brief && (shown[v] || elsewhere(p, k) || briefOmits(p, k, p.Rates[k])) {
			continue // brief: one of several rates that are the same (accepted = sent = intended)
		}
		shown[v] = true
		label, unit := rateLabel(k)
		switch {
		case isShare(k):
			v, unit = fmtShare(p.Rates[k]), ""
		case k == results.RateMaxRate && p.Rates[k] == 0:
			v, unit = "none passed", "" // not a rate of 0.00/s
		case k == results.RateMaxRate && bracketOf(p) != "":
			v, unit = bracketOf(p), "events/second ("+MaxRateBound(p)+")" // findmax_bracket.go: --max-steps ended the search
		case k == results.RateMaxRate && MaxRateBound(p) != "":
			v, unit = "≥ "+fmtRate(p.Rates[k]), "events/second ("+MaxRateBound(p)+")" // the search stopped short of the relay's figure
		case offeredRate[k]:
			v, unit = fmtRate(p.Rates[k]), "events/second"
		case opRates[k]:
			unit = opNoun(p) + "/second" // "accepted/second" said what, not of what
		case k == results.RateMB:
			v = fmtMiBps(mibps(p.Rates[k]))
			if kind(p) == "subscribe" {
				label = "Publish bandwidth" // the subscribers' bytes are not in it
			}
		}
		label, v = briefRateLine(p, k, label, v, unit) // summary_labels.go: one label in both summaries
		if brief && k == "accepted_per_sec" && p.Workload == "load" && fmtFloat(p.Rates["intended_per_sec"], 2) == fmtFloat(p.Rates[k], 2) {
			v += " (as intended)" // the load's offered rate, whose own line would repeat the figure
		}
		kv(w, label, v)
	}
}

// restatesAccepted reports whether counter k only repeats the accepted
// count (planned = intended = sent = accepted: nothing was lost on the way).
func restatesAccepted(p *results.Phase, k string) bool {
	a, ok := p.Counts[results.CountAccepted]
	return ok && k != results.CountAccepted && restates[k] && p.Counts[k] == a
}

// elsewhere reports whether the brief summary shows figure k of p in
// another place: a group's figure ("publish_alone_sent") in the group
// table, a figure a note states with its context ("publish throughput
// ratio together/alone: 1.00× (…)").
func elsewhere(p *results.Phase, k string) bool {
	if groupFigure(p, k) || mixedFigure(p, k) {
		return true // in the group table, or the together-vs-alone block
	}
	// As the notes write the key: "OK p99 ratio together/alone" (humanName),
	// "ok p99 ratio together/alone" in results files written before.
	name, old := humanName(k)+" ", strings.ReplaceAll(k, "_", " ")+" "
	return slices.ContainsFunc(p.Notes, func(n string) bool { return strings.HasPrefix(n, name) || strings.HasPrefix(n, old) })
}

// groupFigure reports whether figure k of p is one of its groups'
// ("publish_alone_sent" of the group "publish/alone").
func groupFigure(p *results.Phase, k string) bool {
	for _, g := range p.Groups {
		if strings.HasPrefix(k, strings.NewReplacer("/", "_", "-", "_", " ", "_").Replace(g.Name)+"_") {
			return true
		}
	}
	return false
}

// detailCount reports whether the brief summary leaves counter k to the
// full one: byte counts and the client's own timings and CPU.
func detailCount(k string) bool {
	return strings.HasPrefix(k, "bytes_") || strings.HasPrefix(k, "client_") ||
		strings.HasSuffix(k, "_ns") || strings.HasSuffix(k, "_us")
}

// countLine is a counter as the summary prints it: bytes, and times kept
// in ns or µs (keys ending _ns, _us), in human units under a label
// without the unit.
func countLine(k string, n int64) (label, value string) {
	if k == "canceled" || k == "ops_canceled" { // load's spelling, kept in its results files
		return title(humanName(strings.Replace(k, "canceled", "cancelled", 1))), fmtInt(n)
	}
	c := countCol(k) // tables.go: the same label and unit as the comparison tables
	return title(c.head), c.fmt(float64(n))
}

// writeLatencies prints p50/p90/p99/p99.9/max of every latency, the
// primary one first.
func writeLatencies(w io.Writer, p *results.Phase) {
	lat := p.Latency
	names := latencyOrder(lat)
	if isBrief(w) {
		names = headlineLatencies(p, names) // the others: -v
	}
	for _, n := range names {
		h := lat[n]
		if h == nil || h.Count == 0 {
			kv(w, latencyLine(p, n), dash+" (no samples)")
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
		kv(w, latencyLine(p, n), strings.Join(parts, "  "))
	}
}

// latencyOrder is the names of lats in the order the summary lists them:
// the primary latency first, each followed by its other timings and parts
// ("ok", "ok_alone", "ok_uncorrected", then "eose", …).
func latencyOrder(lats map[string]*results.Histogram) []string {
	names := sortedKeys(lats)
	family := func(n string) string { return latencyBase(strings.TrimSuffix(n, "_alone")) }
	prim := family(results.PrimaryLatency(lats))
	sort.SliceStable(names, func(i, j int) bool {
		bi, bj := family(names[i]), family(names[j])
		if (bi == prim) != (bj == prim) {
			return bi == prim
		}
		return bi < bj
	})
	return names
}

// headlineLatencies are the latencies of names the brief summary shows:
// the phase's primary one and its groups' (a mixed load's OK of its
// publishes and EOSE of its queries, subscribe's delivery), when the
// phase holds them.
func headlineLatencies(p *results.Phase, names []string) []string {
	if len(names) < 2 {
		return names
	}
	want := map[string]bool{results.PrimaryLatency(p.Latency): true}
	for _, g := range p.Groups {
		want[results.PrimaryLatency(g.Latency)] = true
	}
	return slices.DeleteFunc(slices.Clone(names), func(n string) bool { return !want[n] })
}

// latencyLine labels latency n of p in the summary: "OK Latency", "First
// Event Latency"; a mixed phase's with its side and part ("OK Latency
// (publishing, together)").
// A latency kept both ways says from when it is timed ("OK Latency (from
// intended send time)"); send lateness is "Lateness (actual − intended
// send time)".
func latencyLine(p *results.Phase, n string) string {
	if t, ok := latencyTitles[n]; ok {
		return t
	}
	var part []string
	if t := latencyTiming(p.Latency, n); t != "" {
		n, part = latencyBase(n), []string{t}
	}
	base, alone := strings.CutSuffix(n, "_alone")
	for _, m := range mixedSpecs {
		if p.Workload == "mixed" && base == m.lat {
			n = base
			side := "together"
			if alone {
				side = "alone"
			}
			part = append([]string{m.verb, side}, part...)
		}
	}
	ws := strings.Fields(latencyLabel(n))
	for i := range ws {
		ws[i] = title(ws[i])
	}
	s := strings.Join(ws, " ") + " Latency"
	if len(part) > 0 {
		s += " (" + strings.Join(part, ", ") + ")"
	}
	return s
}

func writeGroups(w io.Writer, p *results.Phase) {
	if len(p.Groups) == 0 || p.Name == "sweep" {
		return
	}
	if isBrief(w) && slices.ContainsFunc(p.Notes, isTableRow) {
		return // the phase's own table of its groups (find-max's steps) is in its notes
	}
	if s, ok := w.(*summaryOut); ok && s.brief && s.compared {
		return // the comparison's table of these groups, every run's rows, follows
	}
	t := groupTable(p.Name, []*relayRuns{{key: "-", runs: []*results.Run{{Phases: []results.Phase{*p}}}}})
	if t == nil {
		return
	}
	if timingLead(p.Latency, []string{results.LatencyOK, results.LatencyEOSE}) != "" {
		t.lead = nil // the latency lines above say from when they are timed
	}
	// Drop the relay column: the block is already about one relay.
	t.head = t.head[1:]
	for i, h := range t.head {
		t.head[i] = strings.Replace(h, "canceled", "cancelled", 1) // load's key, the one spelling printed
	}
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
	if isBrief(w) {
		briefColumns(t)
	}
	fmt.Fprintf(w, "  %s:\n", t.title)
	t.text(w, "    ")
}

// briefHidesColumn reports whether the brief summary leaves column h to
// -v: byte counts, the client's own figures and reads, and the tail past
// p99 (max stays).
func briefHidesColumn(h string) bool {
	l := strings.ToLower(h)
	return strings.HasPrefix(l, "bytes ") || strings.HasPrefix(l, "client ") ||
		strings.HasPrefix(l, "subscriber ") || strings.HasSuffix(h, " p99.9") || briefOmitsHead(h)
}

// restatesHead reports whether column h is a restates figure's.
func restatesHead(h string) bool {
	for k := range restates {
		if countHead(k) == h || rateHead(k) == h {
			return true
		}
	}
	return false
}

// restates are the group columns that, when equal to an earlier one, say
// only that nothing was lost between the two (requested = sent = accepted,
// deliveries expected = deliveries).
var restates = map[string]bool{"requested": true, "sent": true, "intended": true, "planned": true,
	"intended_per_sec": true, "sent_per_sec": true, "accepted_per_sec": true, "expected": true}

// briefColumns leaves out of a table, for the brief summary, the columns
// that say nothing happened (every cell 0 or –), those briefHidesColumn
// names, and
// a column that restates an earlier one cell for cell (sent = accepted,
// intended per sec = events per sec).
func briefColumns(t *table) {
	var keep []int
	same := func(i, j int) bool {
		return !slices.ContainsFunc(t.rows, func(r []string) bool { return cell(r, i) != cell(r, j) })
	}
	for i, h := range t.head {
		if i > 0 && (briefHidesColumn(h) || !slices.ContainsFunc(t.rows, func(r []string) bool {
			c := cell(r, i)
			return c != "0" && c != dash && c != ""
		}) || restatesHead(h) && slices.ContainsFunc(keep, func(j int) bool { return j > 0 && same(i, j) })) {
			continue
		}
		keep = append(keep, i)
	}
	pick := func(r []string) []string {
		out := make([]string, 0, len(keep))
		for _, i := range keep {
			out = append(out, cell(r, i))
		}
		return out
	}
	left := map[int]bool{}
	for j, i := range keep {
		left[j] = t.left[i]
	}
	t.head, t.left = pick(t.head), left
	for i := range t.rows {
		t.rows[i] = pick(t.rows[i])
	}
}

func writeVerification(w io.Writer, p *results.Phase) {
	v := p.Verification
	if v == nil {
		return
	}
	switch {
	case v.Status() == results.VerificationNotVerified:
		kv(w, "Verification", "NOT VERIFIED: no answer was checked")
	case isBrief(w):
		kv(w, "Verification", verdict(v)+briefChecks(p, v))
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

// briefChecks is the verification's counts in one parenthesis, the faults
// only when there are some: " (20 answers checked)", " (20 answers
// checked: missing 3, duplicated 1)"; a subscribe phase's checked answers
// are its subscriptions, whose deliveries were checked (" (442,400
// deliveries to 50 subscriptions checked)").
func briefChecks(p *results.Phase, v *results.Verification) string {
	var bad []string
	for _, f := range []struct {
		name string
		n    int64
	}{{"missing", v.Missing}, {"extra", v.Extra}, {"not matching", v.NotMatching}, {"invalid", v.Invalid},
		{"duplicated", v.Duplicated}, {"misordered", v.Misordered}, {"truncated", v.Truncated}} {
		if f.n > 0 {
			bad = append(bad, f.name+" "+fmtInt(f.n))
		}
	}
	s := " (" + fmtInt(v.Checked) + " answers checked"
	if kind(p) == "subscribe" {
		s = " (" + numfmt.Count(v.Returned, "delivery") + " to " + numfmt.Count(v.Checked, "subscription") + " checked"
	} else if w := lifecycleChecked(p, v); w != "" {
		s = " (" + w + " checked"
	}
	if !v.Verified {
		s += ", validity and filter match only"
	}
	if len(bad) > 0 {
		s += ": " + strings.Join(bad, ", ")
	}
	return s + ")"
}

// lifecycleChecked words what a lifecycle phase's checked answers are:
// its read-backs by id and its live subscription ("50 read-back answers
// and 1 live subscription": 51 answers for 50 events read a miscount), ""
// when the groups do not account for them.
func lifecycleChecked(p *results.Phase, v *results.Verification) string {
	if kind(p) != "lifecycle" {
		return ""
	}
	var live, reads int64
	for _, g := range p.Groups {
		if g.Verification == nil {
			continue
		}
		switch g.Name {
		case "deliver":
			live += g.Verification.Checked
		case "read_your_write":
			reads += g.Verification.Checked
		}
	}
	if live+reads != v.Checked || live+reads == 0 {
		return ""
	}
	return numfmt.Count(reads, "read-back answer") + " and " + numfmt.Count(live, "live subscription")
}

func writeResources(w io.Writer, p *results.Phase) {
	r := p.Resources
	if r == nil || isBrief(w) {
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
		line := outcome.Split(a)
		if isBrief(w) && !strings.Contains(line, ", ") {
			continue // one outcome for all, already in the counts
		}
		kv(w, "Outcomes", line)
	}
	if p.Aborted != "" {
		fmt.Fprintf(w, "  STOPPED EARLY: %s\n", p.Aborted)
	}
	notes := p.Notes
	if p.ClientLimited {
		line := "client-limited: the client, not the relay, limited these figures"
		why := outcome.WhyClientLimited + " " // a note giving the phase's own reason
		if i := slices.IndexFunc(notes, func(n string) bool { return strings.HasPrefix(n, machineBusy) }); i >= 0 {
			// find-max stopped by a machine busy with other processes: its note is the reason.
			line = "machine busy (these figures are the machine's, not the relay's): " + strings.TrimPrefix(notes[i], machineBusy)
			notes = slices.Delete(slices.Clone(notes), i, i+1)
		} else if i := slices.IndexFunc(notes, func(n string) bool { return strings.HasPrefix(n, why) }); i >= 0 {
			// One line with that reason, not the warning and the note after it.
			line = "client-limited (these figures are the client's, not the relay's): " + strings.TrimPrefix(notes[i], why)
			notes = slices.Delete(slices.Clone(notes), i, i+1)
		}
		fmt.Fprintf(w, "  WARNING: %s\n", line)
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
	if isBrief(w) && len(mixedSides(p)) > 0 {
		notes = slices.DeleteFunc(slices.Clone(notes), isMixedRatioNote) // in the together-vs-alone block
	}
	if isBrief(w) {
		notes = slices.Clone(notes)
		for i, n := range notes {
			notes[i] = noteWords(n, p) // sweepnotes.go: results keys in words
		}
	}
	writeNotes(w, "  ", "Note", notes, stepsLead(p))
}

// machineBusy begins the note of a find-max search that other processes
// competing for the machine's cores stopped (workload's machineBusyNote):
// a lower bound, as client-limited, but the machine's doing.
const machineBusy = "machine busy: "

// writeNotes prints notes, each "Note: …", except that a run of notes
// that are the rows of a Markdown table (find-max's steps: "| offered/s |
// … |" and its "|---:|" rule) is printed as an aligned text table, under
// lead when it is not "".
func writeNotes(w io.Writer, indent, label string, notes []string, lead string) {
	for i := 0; i < len(notes); i++ {
		if !isTableRow(notes[i]) {
			fmt.Fprintf(w, "%s%s: %s\n", indent, label, notes[i])
			continue
		}
		var t *table
		t, i = noteTable(notes, i)
		i--
		if lead != "" {
			t.lead = []string{lead}
		}
		t.text(w, indent+"  ")
	}
}

// noteTable parses the run of notes from notes[i] that are the rows of a
// Markdown table (its head, its "|---:|" rule, its rows) into a table; it
// returns the index of the first note after them.
func noteTable(notes []string, i int) (*table, int) {
	t := &table{left: map[int]bool{}}
	for ; i < len(notes) && isTableRow(notes[i]); i++ {
		cells := tableCells(notes[i])
		switch {
		case t.head == nil:
			t.head = cells
		case isRule(cells):
			for c, s := range cells {
				if !strings.HasSuffix(s, ":") {
					t.left[c] = true // "---" or ":---": left-aligned
				}
			}
		default:
			t.rows = append(t.rows, cells)
		}
	}
	return t, i
}

// noteTables are the tables a phase's notes hold (find-max's steps), each
// titled with its run and phase, for Markdown and HTML, whose notes
// (notes) leave their rows out.
func noteTables(files []*results.File) []*table {
	var out []*table
	for _, f := range files {
		for i := range f.Runs {
			r := &f.Runs[i]
			for j := range r.Phases {
				p := &r.Phases[j]
				for k := 0; k < len(p.Notes); k++ {
					if isTableRow(p.Notes[k]) {
						var t *table
						t, k = noteTable(p.Notes, k)
						t.title = title(p.Name) + " — " + runLabel(r)
						if l := stepsLead(p); l != "" {
							t.lead = []string{l}
						}
						out = append(out, t)
					}
				}
			}
		}
	}
	return out
}

// stepsLead is the line over the table p's notes hold (find-max's steps)
// saying from when its latencies are timed, when p's groups (the steps)
// keep their primary latency both ways; "" otherwise.
func stepsLead(p *results.Phase) string {
	var fs figureNames
	var prims []string
	for _, g := range p.Groups {
		fs.add(nil, nil, g.Latency)
		if l := results.PrimaryLatency(g.Latency); l != "" && !slices.Contains(prims, l) {
			prims = append(prims, l)
		}
	}
	return timingLead(fs.lats, prims)
}

func isTableRow(s string) bool {
	return strings.HasPrefix(s, "|") && strings.HasSuffix(s, "|") && len(s) > 1
}

// tableCells splits "| a | b |" into its trimmed cells.
func tableCells(row string) []string {
	cells := strings.Split(strings.TrimSuffix(strings.TrimPrefix(row, "|"), "|"), "|")
	for i := range cells {
		cells[i] = strings.TrimSpace(cells[i])
	}
	return cells
}

// isRule reports whether cells are a Markdown table's "|---:|---|" line.
func isRule(cells []string) bool {
	for _, c := range cells {
		if strings.Trim(c, ":-") != "" || !strings.Contains(c, "-") {
			return false
		}
	}
	return true
}

// opRates are the rates of a load's operations at one stage: intended,
// sent, accepted.
var opRates = map[string]bool{"intended_per_sec": true, "sent_per_sec": true, "accepted_per_sec": true}

// opNoun is what a phase's operations are: events when it publishes,
// queries when it queries, else operations.
func opNoun(p *results.Phase) string {
	k, _ := p.Params["kind"].(string)
	switch {
	case k == "publish" || k == "" && kind(p) == "publish":
		return "events"
	case k == "query" || k == "" && kind(p) == "query":
		return "queries"
	}
	return "operations"
}

// MaxRateBound says why find-max phase p's max_rate is only a lower bound
// on the relay's capacity: the search stopped at a step the client, the
// busy machine, or the relay or the busy machine limited (the group with
// pass 0 and client_limited 1, as judge's findMaxStop finds it). It is ""
// when the rate is the relay's figure, or none passed.
func MaxRateBound(p *results.Phase) string {
	if p.Workload != "find-max" || p.Rates[results.RateMaxRate] <= 0 {
		return ""
	}
	if !p.ClientLimited {
		if p.Rates["first_failing_rate"] == 0 {
			// every step passed: --max-steps, --max-rate or
			// --load-max-events (or an interrupt) ended the search
			return "a lower bound: no step failed before the search's own limits ended it"
		}
		_, why := maxRateBracket(p) // the answer lies below first_failing_rate, not yet to --precision
		return why
	}
	for _, g := range p.Groups {
		if g.Counts["pass"] != 0 || g.Counts["client_limited"] == 0 {
			continue
		}
		who := "the client limited"
		switch {
		case g.Counts["relay_or_machine"] > 0:
			who = "the relay or the busy machine limited"
		case g.Counts["machine_busy"] > 0:
			who = "the busy machine limited"
		}
		return "a lower bound: the search stopped at a step " + who
	}
	return ""
}

// offeredRate are find-max's rates: the highest rate that passed and the
// first that failed, in events per second.
var offeredRate = map[string]bool{"max_rate": true, "first_failing_rate": true}

// rateLabel names a rate for the summary: "deliveries_per_sec" →
// ("Deliveries Rate", "deliveries/second"), "mb_per_sec" → ("Bandwidth",
// "MiB/s", its value converted: mibps); a name without "_per_sec" ("events_per_query") has no unit.
func rateLabel(k string) (label, unit string) {
	if k == results.RateMB {
		return "Bandwidth", "MiB/s"
	}
	base, ok := strings.CutSuffix(k, "_per_sec")
	if !ok {
		return title(humanName(k)), "" // a ratio, not a rate: no unit to add
	}
	return title(humanName(base)) + " Rate", humanName(base) + "/second"
}
