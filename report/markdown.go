package report

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/relaybench/relaybench/results"
)

// Options are the choices a report can be given.
type Options struct {
	// Title heads the report; when empty the first file's Title is used, else
	// "Relay Benchmark".
	Title string
}

func (o Options) title(files []*results.File) string {
	if o.Title != "" {
		return o.Title
	}
	for _, f := range files {
		if f.Title != "" {
			return f.Title
		}
	}
	return "Relay Benchmark"
}

// Markdown writes a Markdown report of files: title; what was run, on what,
// when and with which build; the relay, publish, query, per-phase, sweep,
// verification and resource tables (medians and spreads for repeated runs);
// then notes and errors.
func Markdown(w io.Writer, files []*results.File, o Options) error {
	if len(files) == 0 {
		return fmt.Errorf("no results files")
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "# %s\n\n", mdText(o.title(files)))
	verdictMarkdown(bw, files)
	fmt.Fprintln(bw, "## What was run")
	fmt.Fprintln(bw)
	for i, f := range files {
		if len(files) > 1 {
			fmt.Fprintf(bw, "File %d:\n\n", i+1)
		}
		for _, l := range reportHeaderLines(f) {
			v := mdText(l[1])
			if l[0] == "Command" {
				v = mdCode(l[1])
			}
			fmt.Fprintf(bw, "- **%s**: %s\n", mdText(l[0]), v)
		}
		fmt.Fprintln(bw)
	}
	ts := tables(files)
	warn := warnings(files)
	if len(warn) > 0 {
		fmt.Fprintln(bw, "## Warnings")
		fmt.Fprintln(bw)
		for _, s := range warn {
			fmt.Fprintf(bw, "- %s\n", mdText(s))
		}
		fmt.Fprintln(bw)
	}
	fmt.Fprintln(bw, "## Results")
	fmt.Fprintln(bw)
	for _, t := range ts {
		t.foldZeroColumns() // as in HTML: a wide phase table's zeros are named under it
		t.markdown(bw)
	}
	for _, t := range append(noteTables(files), thresholdTables(files)...) {
		t.markdown(bw)
	}
	conformanceMarkdown(bw, files)
	if notes := notes(files); len(notes) > 0 {
		fmt.Fprintln(bw, "## Notes and errors")
		fmt.Fprintln(bw)
		for _, n := range notes {
			fmt.Fprintf(bw, "- %s\n", mdText(n))
		}
		fmt.Fprintln(bw)
	}
	return bw.Flush()
}

// warnings lists, per run and phase, what makes a figure untrustworthy:
// failed verification, client-limited measurement, an interrupted run.
func warnings(files []*results.File) []string {
	var out []string
	for _, f := range files {
		if f.Interrupted {
			out = append(out, "The run was "+interruptedWhen(f)+".")
		}
		for i := range f.Runs {
			r := &f.Runs[i]
			for j := range r.Phases {
				p := &r.Phases[j]
				if st := phaseStatus(p); len(st) > 0 {
					out = append(out, fmt.Sprintf("%s, %s: %s.", runLabel(r), p.Name, strings.Join(st, ", ")))
				}
			}
		}
	}
	return out
}

// notes lists run and phase notes and errors, each labelled with its run.
func notes(files []*results.File) []string {
	var out []string
	for _, f := range files {
		header := corpusNote(f) // the header's Corpus line already (reportHeaderLines)
		for i := range f.Runs {
			r := &f.Runs[i]
			for _, e := range r.Errors {
				out = append(out, fmt.Sprintf("ERROR %s: %s", runLabel(r), e))
			}
			for _, n := range r.Notes {
				if n != header {
					out = append(out, fmt.Sprintf("%s: %s", runLabel(r), n))
				}
			}
			var sweep []*results.Phase // its notes given once for the sizes that have them (below)
			for j := range r.Phases {
				p := &r.Phases[j]
				for _, e := range p.Errors {
					out = append(out, fmt.Sprintf("ERROR %s, %s: %s", runLabel(r), p.Name, e))
				}
				if isSweepPhase(p.Name) && p.Size > 0 {
					sweep = append(sweep, p)
				} else {
					for _, n := range p.Notes {
						if !isTableRow(n) { // in its table (noteTables)
							out = append(out, fmt.Sprintf("%s, %s: %s", runLabel(r), p.Name, n))
						}
					}
				}
				if v := p.Verification; v != nil {
					for _, n := range v.Notes {
						out = append(out, fmt.Sprintf("%s, %s, verification: %s", runLabel(r), p.Name, n))
					}
				}
			}
			for _, n := range sweepNotes(sweep) {
				out = append(out, fmt.Sprintf("%s, sweep at %s: %s", runLabel(r), sweepSizes(n.at, sweep), n.text))
			}
		}
	}
	return out
}

func runLabel(r *results.Run) string {
	if r.Repeat > 0 {
		return fmt.Sprintf("%s (repeat %d)", relayKey(&r.Relay), r.Repeat)
	}
	return relayKey(&r.Relay)
}
