package report

import (
	"bufio"
	"fmt"
	"html"
	"io"

	"github.com/relaybench/relaybench/results"
)

// abCSS lays the two sides of a comparison side by side.
const abCSS = `.ab-head{border-left:4px solid #3558a8;background:#f2f5fb;padding:6px 14px;margin:0 0 18px}.ab-head p{margin:4px 0;font-weight:600}
.sides{display:grid;grid-template-columns:1fr 1fr;gap:0 28px}.sides h3{margin-top:8px}`

// CompareHTML writes the comparison of Compare as one self-contained page:
// a headline per relay (the main figure's ratio, how many figures changed
// beyond noise), each side's verdict and what it ran, side by side; per relay on both
// sides, every figure with the baseline and candidate medians, their ratio,
// the change and its significance; then the charts of the single-run
// report with both sides drawn together, each relay's runs named
// "RELAY (baseline)" and "RELAY (candidate)". failOn, when given, is shown
// as the table of --fail-on limits. It loads nothing.
func CompareHTML(w io.Writer, base, cand []*results.File, o Options, failOn []FailOnResult) error {
	if len(base) == 0 || len(cand) == 0 {
		return fmt.Errorf("compare needs baseline and candidate results files")
	}
	ab, err := abTables(base, cand)
	if err != nil {
		return err
	}
	cs, err := charts(append(relabel(base, "baseline"), relabel(cand, "candidate")...))
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	t := "Baseline vs candidate"
	if o.Title != "" {
		t = o.Title
	}
	t = html.EscapeString(t)
	fmt.Fprintf(bw, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>%s</title>\n<style>\n%s\n%s\n</style>\n</head>\n<body>\n<main>\n<h1>%s</h1>\n", t, css, abCSS, t)
	fmt.Fprintln(bw, `<div class="ab-head">`)
	for _, h := range ab.heads {
		fmt.Fprintf(bw, "<p>%s</p>\n", html.EscapeString(h))
	}
	fmt.Fprintln(bw, "</div>")
	fmt.Fprintln(bw, `<div class="sides">`)
	for _, side := range abSides(base, cand) {
		fmt.Fprintf(bw, "<section id=\"%s\">\n<h2>%s</h2>\n", slug(side.name), side.name)
		verdictHTML(bw, side.files)
		common, own := sideLines(side.files)
		metaLinesHTML(bw, common)
		for i, ls := range own {
			if len(own) > 1 {
				fmt.Fprintf(bw, "<h4>File %d</h4>\n", i+1)
			}
			metaLinesHTML(bw, ls)
		}
		fmt.Fprintln(bw, "</section>")
	}
	fmt.Fprintln(bw, "</div>")
	if warn := abWarnings(base, cand); len(warn) > 0 {
		fmt.Fprintln(bw, `<div class="warnings"><strong>Read before trusting the figures:</strong><ul>`)
		for _, s := range warn {
			fmt.Fprintf(bw, "<li>%s</li>\n", html.EscapeString(s))
		}
		fmt.Fprintln(bw, "</ul></div>")
	}
	fmt.Fprintln(bw, "<h2>Baseline vs candidate</h2>")
	fmt.Fprintf(bw, "<p class=\"note\">%s</p>\n", html.EscapeString(ab.legend()))
	for _, tb := range ab.tables {
		fmt.Fprintln(bw, `<div class="scroll">`)
		tb.html(bw)
		fmt.Fprintln(bw, "</div>")
	}
	for _, k := range ab.onlyBase {
		fmt.Fprintf(bw, "<p class=\"note\">Only in baseline: %s</p>\n", html.EscapeString(k))
	}
	for _, k := range ab.onlyCand {
		fmt.Fprintf(bw, "<p class=\"note\">Only in candidate: %s</p>\n", html.EscapeString(k))
	}
	if len(failOn) > 0 {
		t := failOnTable(failOn)
		fmt.Fprintln(bw, `<div class="scroll">`)
		t.html(bw)
		fmt.Fprintln(bw, "</div>")
	}
	if err := chartsHTML(bw, cs); err != nil {
		return err
	}
	fmt.Fprintln(bw, "<footer>Made by relaybench report --base/--cand from the results files alone; every figure above is in them. “–” marks a figure the files do not hold.</footer>")
	fmt.Fprintln(bw, "</main>\n</body>\n</html>")
	return bw.Flush()
}

// abWarnings are the warnings of both sides, each named by its side.
func abWarnings(base, cand []*results.File) []string {
	var out []string
	for _, side := range abSides(base, cand) {
		for _, s := range warnings(side.files) {
			out = append(out, side.name+": "+s)
		}
	}
	return out
}

// relabel returns copies of files whose relays are named "NAME (side)", so
// that charts of both sides of a comparison keep them apart. The files are
// not changed.
func relabel(files []*results.File, side string) []*results.File {
	var out []*results.File
	for _, f := range files {
		c := *f
		c.Runs = append([]results.Run(nil), f.Runs...)
		for i := range c.Runs {
			r := &c.Runs[i]
			name := r.Relay.Name
			if name == "" {
				name = r.Relay.URL
			}
			r.Relay.Name = name + " (" + side + ")"
		}
		out = append(out, &c)
	}
	return out
}
