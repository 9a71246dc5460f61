package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/alecthomas/kong"

	"github.com/relaybench/relaybench/report"
	"github.com/relaybench/relaybench/results"
)

// reportCmd renders results files; it measures nothing, so any report can be
// made again from the files (vegeta's model: attack | tee results | report).
type reportCmd struct {
	Files  []string `arg:"" optional:"" name:"results" help:"Results files (JSON) to report on."`
	Format string   `short:"f" aliases:"report-format" placeholder:"FORMAT" help:"summary, md (markdown), json, csv or html; default: from the -o extension, else summary. For --base/--cand: summary (text) or md."`
	Output string   `name:"o" short:"o" aliases:"output,report-file" placeholder:"FILE" help:"Write the report to FILE instead of standard output."`
	Title  string   `aliases:"report-title" help:"Report title (default: the results file's title, else \"Relay Benchmark\")."`
	Charts string   `placeholder:"DIR" help:"Also write every chart as PNG and SVG into DIR."`
	Base   []string `placeholder:"FILE" help:"Baseline results files: compare them with --cand (repeat the flag, separate with commas, or list files after it)."`
	Cand   []string `placeholder:"FILE" help:"Candidate results files compared with --base."`
}

func init() {
	register("report", "Render results files as a summary, Markdown, JSON, CSV or HTML report, or compare baseline and candidate results.", &reportCmd{})
}

// reportFlagsWithValue are the report flags that take a value, as written
// after normalizeArgs (double dash).
var reportFlagsWithValue = map[string]bool{
	"-f": true, "--format": true, "--report-format": true,
	"--o": true, "-o": true, "--output": true, "--report-file": true,
	"--title": true, "--report-title": true, "--charts": true,
}

// splitSides rebuilds the file lists from the raw arguments, so that
// "--base A1 A2 --cand B1 B2" gives both sides all their files: a bare
// argument belongs to the last --base or --cand before it, else to the
// plain list of results files.
func splitSides(args []string) (files, base, cand []string) {
	cur := &files
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, val, hasVal := strings.Cut(a, "=")
		switch {
		case a == "report":
			continue
		case name == "--base" || name == "--cand":
			cur = &base
			if name == "--cand" {
				cur = &cand
			}
			if hasVal {
				*cur = append(*cur, splitComma(val)...)
			} else if i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				i++
				*cur = append(*cur, splitComma(args[i])...)
			}
		case strings.HasPrefix(a, "-") && a != "-":
			if reportFlagsWithValue[name] && !hasVal {
				i++ // skip the flag's value
			}
		default:
			*cur = append(*cur, splitComma(a)...)
		}
	}
	return files, base, cand
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

// checkFlags checks the report format before any file is read (see
// flags.go): an unknown one is a usage error.
func (c *reportCmd) checkFlags() error {
	if len(c.Base) > 0 || len(c.Cand) > 0 {
		switch strings.ToLower(c.Format) {
		case "", "summary", "text", "txt", "md", "markdown":
			return nil
		}
		return fmt.Errorf("--format %s: unknown format for --base/--cand (want summary or md)", c.Format)
	}
	if _, err := formatFor(c.Format, c.Output); err != nil {
		return fmt.Errorf("--format %s: %v", c.Format, err)
	}
	return nil
}

// Run renders the report.
func (c *reportCmd) Run(g *Globals, kctx *kong.Context) error {
	files, base, cand := splitSides(kctx.Args)
	if len(c.Base) == 0 && len(c.Cand) == 0 {
		files, base, cand = c.Files, nil, nil
	}
	var buf bytes.Buffer
	var w io.Writer = &buf
	if len(base) > 0 || len(cand) > 0 {
		if len(base) == 0 || len(cand) == 0 {
			return fmt.Errorf("comparing needs both --base and --cand results files")
		}
		if len(files) > 0 {
			return fmt.Errorf("with --base/--cand, give every file to one side (unassigned: %s)", strings.Join(files, " "))
		}
		if c.Charts != "" {
			return fmt.Errorf("--charts is for reports of results files, not for --base/--cand comparisons")
		}
		format := strings.ToLower(c.Format)
		if format == "" && strings.HasSuffix(strings.ToLower(c.Output), ".md") {
			format = "md"
		}
		bf, err := readAll(base)
		if err != nil {
			return err
		}
		cf, err := readAll(cand)
		if err != nil {
			return err
		}
		if err := report.Compare(w, bf, cf, format); err != nil {
			return err
		}
		return c.emit(buf.Bytes())
	}
	if len(files) == 0 {
		return fmt.Errorf("no results files given (relaybench report RESULTS.json…, or --base A.json --cand B.json)")
	}
	format, err := formatFor(c.Format, c.Output)
	if err != nil {
		return err
	}
	fs, err := readAll(files)
	if err != nil {
		return err
	}
	o := report.Options{Title: c.Title}
	switch format {
	case "summary":
		for i, f := range fs {
			if i > 0 {
				fmt.Fprintln(w)
			}
			if err := report.Summary(w, f); err != nil {
				return err
			}
		}
	case "md":
		err = report.Markdown(w, fs, o)
	case "json":
		err = report.JSON(w, fs, o)
	case "csv":
		err = report.CSV(w, fs)
	case "html":
		err = report.HTML(w, fs, o)
	}
	if err != nil {
		return err
	}
	if c.Charts != "" {
		paths, err := report.Charts(c.Charts, fs, o)
		if err != nil {
			return err
		}
		if g.Verbose {
			for _, p := range paths {
				fmt.Fprintln(os.Stderr, "wrote", p)
			}
		}
		fmt.Fprintf(os.Stderr, "relaybench: wrote %d chart files to %s\n", len(paths), c.Charts)
	}
	return c.emit(buf.Bytes())
}

// emit writes the finished report to the output file or standard output.
func (c *reportCmd) emit(b []byte) error {
	if c.Output == "" || c.Output == "-" {
		_, err := os.Stdout.Write(b)
		return err
	}
	if err := os.WriteFile(c.Output, b, 0o644); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}
