package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/alecthomas/kong"

	"github.com/relaybench/relaybench/internal/safe"
	"github.com/relaybench/relaybench/judge"
	"github.com/relaybench/relaybench/report"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/threshold"
)

// reportCmd renders results files; it measures nothing, so any report can be
// made again from the files (vegeta's model: attack | tee results | report).
type reportCmd struct {
	Files  []string  `arg:"" optional:"" name:"results" help:"Results files (JSON) to report on."`
	Format string    `short:"f" aliases:"report-format" placeholder:"FORMAT" help:"summary, md (markdown), json, csv or html; default: from the -o extension, else summary. For --base/--cand: summary (text), md or html."`
	Output string    `name:"o" short:"o" aliases:"output,report-file" placeholder:"FILE" help:"Write the report to FILE instead of standard output."`
	Title  string    `aliases:"report-title" help:"Report title (default: the results file's title, else \"Relay Benchmark\")."`
	Charts string    `placeholder:"DIR" help:"Write every chart as PNG and SVG into DIR, instead of the terminal summary (also a report with -o or --format)."`
	Base   sideFiles `placeholder:"FILE" help:"Baseline results files: compare them with --cand (repeat the flag, separate with commas, or list files after it)."`
	Cand   sideFiles `placeholder:"FILE" help:"Candidate results files compared with --base (given as for --base)."`
	FailOn []string  `name:"fail-on" sep:"none" placeholder:"FIGURE:±N%" help:"With --base/--cand: fail (exit 5) when FIGURE changed beyond N % in that direction AND significantly (Mann-Whitney U, α=0.05, over repeated runs; needs 4+ runs a side), e.g. 'publish.rate:-10%', 'query.eose.p99:+20%'. A change that is not significant (~) never fails. Repeatable; also fail_on = […] in --thresholds FILE."`
	Force  bool      `help:"With --base/--cand: compare runs of different commands, corpora, parameters or machines, or a segment's file (refused otherwise). With --merge: merge segments that differ."`
	Merge  bool      `help:"The files are the segments of one test (--segment I/N): report on their merge (as relaybench merge, without writing the merged file; --corpus and --cache-dir of merge default)."`
	gateFlags

	skipped error `kong:"-"` // results files left out of the report (readSome)
}

func init() {
	register("report", "Render results files as a summary, Markdown, JSON, CSV or HTML report, or compare baseline and candidate results.", &reportCmd{})
}

// sideFiles is the file list of --base or --cand: the flag's value (commas
// separate files) and every bare argument after it up to the next flag, so
// that "--base before-*.json --cand after-*.json", expanded by the shell,
// gives each side all its files. Kong's own slice flag takes one value: the
// second file of each side would be a stray positional argument, and the
// one after it "unexpected" (exit 2).
type sideFiles []string

// Decode takes the flag's value and the values that follow it.
func (s *sideFiles) Decode(ctx *kong.DecodeContext) error {
	t, err := ctx.Scan.PopValue("file")
	if err != nil {
		return err
	}
	*s = append(*s, splitComma(fmt.Sprint(t.Value))...)
	for next := ctx.Scan.Peek(); next.IsValue() && next.Type != kong.FlagValueToken; next = ctx.Scan.Peek() {
		*s = append(*s, splitComma(fmt.Sprint(ctx.Scan.Pop().Value))...)
	}
	return nil
}

func splitComma(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// formatFor picks the format: the flag, else the output file's extension,
// else the terminal summary.
func formatFor(flag, output string) (string, error) {
	f := strings.ToLower(flag)
	if f == "" {
		switch strings.ToLower(filepath.Ext(output)) {
		case ".md", ".markdown":
			f = "md"
		case ".json":
			f = "json"
		case ".csv":
			f = "csv"
		case ".html", ".htm":
			f = "html"
		default:
			f = "summary"
		}
	}
	switch f {
	case "summary", "text", "txt":
		return "summary", nil
	case "md", "markdown":
		return "md", nil
	case "json", "csv", "html":
		return f, nil
	}
	return "", fmt.Errorf("unknown report format %q (want summary, md, json, csv or html)", flag)
}

// abFormat picks the format of a --base/--cand comparison: the flag, else
// the output file's extension (.md, .html), else the terminal text; JSON
// and CSV have no comparison form.
func abFormat(flag, output string) (string, error) {
	f, err := formatFor(flag, output)
	if err != nil {
		return "", fmt.Errorf("--format %s: %v", flag, err)
	}
	switch f {
	case "summary", "md", "html":
		return f, nil
	}
	if flag == "" {
		return "", fmt.Errorf("-o %s: a comparison is written as text, Markdown (.md) or HTML (.html), not %s (or give --format)", output, f)
	}
	return "", fmt.Errorf("--format %s: unknown format for --base/--cand (want summary, md or html)", flag)
}

// readAll reads the results files; a file that is not a results file, or
// holds no runs, is an error (exit status 1): there would be nothing to
// report, and an empty report would pass for one.
func readAll(paths []string) ([]*results.File, error) {
	var fs []*results.File
	for _, p := range paths {
		f, err := results.Read(p)
		if err != nil {
			return nil, err
		}
		if len(f.Runs) == 0 {
			return nil, fmt.Errorf("%s: holds no runs: nothing to report (the %q command that wrote it measured nothing)", p, f.Command)
		}
		fs = append(fs, f)
	}
	return fs, nil
}

// readSome reads the results files that can be read: each one that
// cannot (not a results file, no runs, an empty file) is named
// on stderr and left out, and skipped says how many were. With none
// readable, the error is the only file's, or names how many failed.
// names[i] is the path fs[i] was read from.
func readSome(paths []string) (fs []*results.File, names []string, skipped, err error) {
	var bad []error
	for _, p := range paths {
		f, err := readAll([]string{p})
		if err != nil {
			bad = append(bad, err)
			continue
		}
		fs = append(fs, f...)
		names = append(names, p)
	}
	switch {
	case len(bad) == 0:
		return fs, names, nil, nil
	case len(fs) == 0 && len(bad) == 1:
		return nil, nil, nil, bad[0]
	}
	for _, e := range bad {
		fmt.Fprintf(os.Stderr, "relaybench: %s (skipped)\n", oneLine(e))
	}
	if len(fs) == 0 {
		return nil, nil, nil, fmt.Errorf("none of the %d results files could be read (named above)", len(paths))
	}
	are := "are"
	if len(bad) == 1 {
		are = "is"
	}
	return fs, names, fmt.Errorf("%d of %d results files could not be read and %s not in the report (named above)", len(bad), len(paths), are), nil
}

// namedFilesExist refuses a results file that does not exist: a usage
// error (exit 2) naming it, as a missing --catalog FILE is, before any file
// is read.
func namedFilesExist(lists ...[]string) error {
	for _, l := range lists {
		for _, p := range l {
			if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
				return fmt.Errorf("%s: no such results file", p)
			}
		}
	}
	return nil
}

// checkFlags checks the report format and that the named results files
// exist before any file is read (see flags.go): either is a usage error.
func (c *reportCmd) checkFlags() error {
	if err := c.checkFormat(); err != nil { // a bad flag is named first, whatever the files
		return err
	}
	return namedFilesExist(c.Files, c.Base, c.Cand)
}

// checkFormat checks the flags that choose the report: format, output and
// the comparison's own flags.
func (c *reportCmd) checkFormat() error {
	if len(c.Base) > 0 || len(c.Cand) > 0 {
		if _, err := threshold.ParseFailOns(c.FailOn, c.Thresholds); err != nil {
			return err
		}
		if len(c.Threshold) > 0 {
			return fmt.Errorf("--threshold is for reports of results files, not for --base/--cand (use --fail-on)")
		}
		_, err := abFormat(c.Format, c.Output)
		return err
	}
	if _, err := formatFor(c.Format, c.Output); err != nil {
		return fmt.Errorf("--format %s: %v", c.Format, err)
	}
	if len(c.FailOn) > 0 || c.Force {
		return fmt.Errorf("--fail-on and --force are for comparisons: give --base and --cand results files")
	}
	return nil
}

// Run renders the report. Of several results files, one that cannot be
// read is named on stderr and left out (readSome); the report of the others
// is made, and the exit status is then 1 unless the report's own is set.
func (c *reportCmd) Run(g *Globals) error {
	c.skipped = nil
	err := c.render(g)
	if err == nil && c.skipped != nil {
		return c.skipped
	}
	return err
}

// render makes the report: of the results files, or the comparison of
// --base and --cand.
func (c *reportCmd) render(g *Globals) error {
	if len(c.Base) > 0 || len(c.Cand) > 0 {
		return c.compare(c.Files, c.Base, c.Cand)
	}
	return c.report(g, c.Files)
}

// compare writes the comparison of the base and candidate results files,
// then judges --fail-on.
func (c *reportCmd) compare(files, base, cand []string) error {
	if err := c.checkSides(files, base, cand); err != nil {
		return err
	}
	format, err := abFormat(c.Format, c.Output)
	if err != nil {
		return err
	}
	bf, err := readAll(base)
	if err != nil {
		return err
	}
	cf, err := readAll(cand)
	if err != nil {
		return err
	}
	if err := report.Comparable(bf, cf); err != nil && !c.Force {
		return withCode(judge.Usage, err)
	}
	if err := report.Pairable(bf, cf); err != nil {
		return withCode(judge.Usage, err)
	}
	fos, err := threshold.ParseFailOns(c.FailOn, c.Thresholds)
	if err != nil {
		return withCode(judge.Usage, err)
	}
	var rs []report.FailOnResult
	if len(fos) > 0 {
		rs = report.CheckFailOn(bf, cf, fos)
	}
	if len(fos) > 0 && len(rs) == 0 { // a limit that judged nothing never passes
		return withCode(judge.Usage, errors.New("--fail-on: no relay of the baseline and the candidate to judge"))
	}
	if slices.ContainsFunc(rs, func(r report.FailOnResult) bool { return r.Error != "" }) {
		return failOnStatus(rs) // a usage error: known before a report is written, so none is
	}
	var buf bytes.Buffer
	if format == "html" {
		err = report.CompareHTML(&buf, bf, cf, report.Options{Title: c.Title}, rs)
	} else if err = report.Compare(&buf, bf, cf, format); err == nil && len(fos) > 0 {
		report.WriteFailOn(&buf, rs, format == "md")
	}
	if err != nil {
		return err
	}
	if err := c.emit(buf.Bytes()); err != nil || len(fos) == 0 {
		return err
	}
	if c.JUnit != "" {
		if err := writeJUnit(c.JUnit, report.FailOnJUnit(rs)); err != nil {
			return err
		}
	}
	return failOnStatus(rs)
}

// checkSides refuses a comparison missing a side, with files on neither
// side, or asking for charts.
func (c *reportCmd) checkSides(files, base, cand []string) error {
	switch {
	case len(base) == 0 || len(cand) == 0:
		return fmt.Errorf("comparing needs both --base and --cand results files")
	case len(files) > 0:
		return fmt.Errorf("with --base/--cand, give every file to one side (unassigned: %s)", strings.Join(files, " "))
	case c.Charts != "":
		return fmt.Errorf("--charts is for reports of results files, not for --base/--cand comparisons")
	}
	return nil
}

// report writes the report of the results files (and --charts, --junit);
// with thresholds, the exit status is the worst verdict's.
func (c *reportCmd) report(g *Globals, files []string) error {
	if len(files) == 0 {
		return fmt.Errorf("no results files given (relaybench report RESULTS.json…, or --base A.json --cand B.json)")
	}
	format, err := formatFor(c.Format, c.Output)
	if err != nil {
		return err
	}
	fs, names, err := c.read(g, files)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	o := report.Options{Title: c.Title}
	if err := writeReport(&buf, format, fs, names, o); err != nil {
		return err
	}
	if err := c.writeCharts(g, fs, o); err != nil {
		return err
	}
	if !c.chartsOnly() { // the charts alone are said on stderr, as -o FILE is
		if err := c.emit(buf.Bytes()); err != nil {
			return err
		}
	}
	if c.JUnit != "" {
		var cases []report.JUnitCase
		for _, f := range fs {
			cases = append(cases, report.JUnitCases(f)...)
		}
		if err := writeJUnit(c.JUnit, cases); err != nil {
			return err
		}
	}
	return c.verdict(fs)
}

// read reads the results files that can be read (readSome; c.skipped says
// which could not), merges them with --merge, and judges them again with
// thresholds. names[i] is the file fs[i] came from (nil for a merge).
func (c *reportCmd) read(g *Globals, files []string) (fs []*results.File, names []string, err error) {
	fs, names, skipped, err := readSome(files)
	if err != nil {
		return nil, nil, err
	}
	c.skipped = skipped
	if c.Merge && skipped != nil {
		// No merge without every segment (merge names them the same way).
		return nil, nil, withCode(judge.Usage, fmt.Errorf("--merge: %v: nothing merged", skipped))
	}
	if c.Merge {
		if fs, err = mergeForReport(g, files, fs, c.Force); err != nil {
			return nil, nil, err
		}
		names = nil
	}
	if len(c.parsed) > 0 {
		for _, f := range fs {
			rejudge(f, c.parsed)
		}
	}
	return fs, names, nil
}

// writeReport writes the report of fs in format (formatFor) to w. The
// summaries of several files are each headed by the file's name (names[i],
// when known): back to back, nothing said which file each came from.
func writeReport(w io.Writer, format string, fs []*results.File, names []string, o report.Options) error {
	switch format {
	case "summary":
		for i, f := range fs {
			if i > 0 {
				fmt.Fprintln(w)
			}
			if len(fs) > 1 && len(names) == len(fs) {
				fmt.Fprintf(w, "File %d of %d: %s\n", i+1, len(fs), safe.Line(names[i]))
			}
			// What the run printed: the brief summary, -v the full one.
			if err := report.WriteSummary(w, f, report.SummaryOptions{Brief: !fullSummary}); err != nil {
				return err
			}
		}
	case "md":
		return report.Markdown(w, fs, o)
	case "json":
		return report.JSON(w, fs, o)
	case "csv":
		return report.CSV(w, fs)
	case "html":
		return report.HTML(w, fs, o)
	}
	return nil
}

// chartsOnly: --charts without -o or --format asks for the charts alone,
// not the terminal summary besides.
func (c *reportCmd) chartsOnly() bool {
	return c.Charts != "" && c.Output == "" && c.Format == ""
}

// writeCharts writes every chart into --charts, when given, and says where
// in one line on stderr, as -o FILE says its report's ("report: FILE");
// -v names every file.
func (c *reportCmd) writeCharts(g *Globals, fs []*results.File, o report.Options) error {
	if c.Charts == "" {
		return nil
	}
	paths, err := report.Charts(c.Charts, fs, o)
	if err != nil {
		return err
	}
	if g.Verbose {
		for _, p := range paths {
			fmt.Fprintf(os.Stderr, "chart: %s\n", p)
		}
	}
	if len(paths) == 0 {
		fmt.Fprintf(os.Stderr, "charts: none written to %s: these results hold nothing to chart\n", c.Charts)
		return nil
	}
	fmt.Fprintf(os.Stderr, "charts: %s (%d files, PNG and SVG)\n", c.Charts, len(paths))
	return nil
}

// verdict is the exit status of a report judging thresholds: the worst
// verdict's (see package judge); nil without thresholds.
func (c *reportCmd) verdict(fs []*results.File) error {
	if len(c.parsed) == 0 {
		return nil
	}
	worst := results.Verdict{}
	for _, f := range fs {
		if f.Verdict != nil && moreSevere(f.Verdict.Status, worst.Status) {
			worst = *f.Verdict
		}
	}
	if worst.Status == judge.Passed {
		return nil
	}
	return withCode(worst.Status, errors.New(judge.Summary(worst)))
}

// rejudge evaluates thresholds ts on a results file read back and judges it
// again: its verdict keeps a status judged at the time (error, interrupted)
// that the file alone cannot tell.
func rejudge(f *results.File, ts []threshold.Threshold) {
	f.Thresholds = threshold.Evaluate(f, ts)
	v := judge.Judge(f, f.Interrupted)
	if old := f.Verdict; old != nil && old.Status == judge.Error && moreSevere(old.Status, v.Status) {
		v.Status, v.Outcome = old.Status, old.Outcome
		v.Reasons = append(append([]string(nil), old.Reasons...), v.Reasons...)
	}
	f.Verdict = &v
}

// severity orders exit statuses as package judge does, most severe first.
var severity = []int{judge.Interrupted, judge.WrongAnswers, judge.Incomplete, judge.Error, judge.Usage, judge.ThresholdsFailed, judge.Passed}

func moreSevere(a, b int) bool {
	rank := func(s int) int {
		for i, x := range severity {
			if x == s {
				return i
			}
		}
		return len(severity)
	}
	return rank(a) < rank(b)
}

// failOnStatus is the exit status of --fail-on results: usage (2) when a
// limit could not be checked, 5 when one failed, else nil.
func failOnStatus(rs []report.FailOnResult) error {
	var bad, failed []string
	for _, r := range rs {
		switch {
		case r.Error != "":
			bad = append(bad, r.FailOn+": "+r.Error)
		case r.Failed:
			failed = append(failed, fmt.Sprintf("%s by %s: %s → %s", r.FailOn, r.Relay, threshold.Format(r.Base, r.Unit), threshold.Format(r.Cand, r.Unit)))
		}
	}
	switch {
	case len(bad) > 0:
		return withCode(judge.Usage, errors.New("--fail-on "+strings.Join(bad, "; ")))
	case len(failed) > 0:
		return withCode(judge.ThresholdsFailed, errors.New("FAIL-ON LIMITS CROSSED: "+strings.Join(failed, "; ")))
	}
	return nil
}

// emit writes the finished report to the output file or standard output;
// a file written is named on stderr, as a run names its results file.
func (c *reportCmd) emit(b []byte) error {
	if c.Output == "" || c.Output == "-" {
		if _, err := os.Stdout.Write(b); err != nil && !readerGone(err) {
			return err
		}
		return nil // written, or not wanted past what its reader took (`| head`)
	}
	if err := os.WriteFile(c.Output, b, 0o644); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	fmt.Fprintf(os.Stderr, "report: %s\n", c.Output)
	return nil
}
