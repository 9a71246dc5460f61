package report

import (
	"bufio"
	"fmt"
	"html"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/relaybench/relaybench/results"
)

// css is the page's only style: embedded, no web fonts.
const css = `body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Liberation Sans",Arial,sans-serif;color:#1d1f23;margin:0;background:#fafafa}
main{max-width:1300px;margin:0 auto;padding:24px 28px 48px;background:#fff}
h1{font-size:26px;margin:0 0 4px}h2{font-size:20px;margin:32px 0 8px;border-bottom:1px solid #ddd;padding-bottom:4px}h3{font-size:16px;margin:22px 0 6px}
dl.meta{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:2px 14px;margin:8px 0}dl.meta dt{font-weight:600;color:#555}dl.meta dd{margin:0;overflow-wrap:anywhere}.arg{white-space:nowrap}
code{font:13px ui-monospace,"Liberation Mono",Menlo,monospace;background:#f2f2f2;padding:1px 4px;border-radius:3px}
table{border-collapse:collapse;margin:6px 0 4px;font-size:13px;font-variant-numeric:tabular-nums}
th,td{padding:4px 8px;border-bottom:1px solid #e5e5e5;text-align:left;white-space:nowrap}th{white-space:normal;vertical-align:bottom;min-width:3.5em}td.long{white-space:normal;min-width:12em}th{background:#f4f5f7;font-weight:600}
td.num,th.num{text-align:right}td.warn{color:#b00020;font-weight:600}tbody tr:hover{background:#f8fbff}
small.spread{color:#777;font-size:11px}.note{color:#666;font-size:12px;margin:2px 0 10px}.scroll{overflow-x:auto}
.warnings{border-left:4px solid #b00020;background:#fff4f4;padding:8px 14px;margin:12px 0}.warnings li{margin:2px 0}
figure{margin:14px 0 22px}figure svg{max-width:100%;height:auto;border:1px solid #eee}figcaption{font-size:12px;color:#555}
.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(520px,1fr));gap:8px 20px}
footer{margin-top:36px;color:#777;font-size:12px}
` + verdictCSS

// HTML writes one self-contained page: the header, warnings and tables of
// the Markdown report, and every chart as inline SVG. It loads nothing: no
// scripts, no external styles, fonts or images.
func HTML(w io.Writer, files []*results.File, o Options) error {
	if len(files) == 0 {
		return fmt.Errorf("no results files")
	}
	cs, err := charts(files)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	t := html.EscapeString(o.title(files))
	fmt.Fprintf(bw, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>%s</title>\n<style>\n%s\n</style>\n</head>\n<body>\n<main>\n<h1>%s</h1>\n", t, css, t)
	verdictHTML(bw, files)
	fmt.Fprintln(bw, "<h2>What was run</h2>")
	for i, f := range files {
		if len(files) > 1 {
			fmt.Fprintf(bw, "<h3>File %d</h3>\n", i+1)
		}
		metaHTML(bw, f)
	}
	if warn := warnings(files); len(warn) > 0 {
		fmt.Fprintln(bw, `<div class="warnings"><strong>Read before trusting the figures:</strong><ul>`)
		for _, s := range warn {
			fmt.Fprintf(bw, "<li>%s</li>\n", html.EscapeString(s))
		}
		fmt.Fprintln(bw, "</ul></div>")
	}
	fmt.Fprintln(bw, "<h2>Results</h2>")
	for _, tb := range slices.Concat(tables(files), noteTables(files), thresholdTables(files)) {
		fmt.Fprintln(bw, `<div class="scroll">`)
		tb.foldZeroColumns() // a wide phase table fits the page; its zeros are named under it
		tb.fitPage()
		tb.html(bw)
		fmt.Fprintln(bw, "</div>")
	}
	conformanceHTML(bw, files)
	if err := chartsHTML(bw, cs); err != nil {
		return err
	}
	if ns := notes(files); len(ns) > 0 {
		fmt.Fprintln(bw, "<h2>Notes and errors</h2>\n<ul>")
		for _, n := range ns {
			fmt.Fprintf(bw, "<li>%s</li>\n", html.EscapeString(n))
		}
		fmt.Fprintln(bw, "</ul>")
	}
	fmt.Fprintln(bw, "<footer>Made by relaybench report from the results file alone; every figure above is in that file. “–” marks a figure the file does not hold.</footer>")
	fmt.Fprintln(bw, "</main>\n</body>\n</html>")
	return bw.Flush()
}

// metaHTML writes what f ran as a definition list. A value never widens
// the page (a relay's long software string wraps anywhere), and an
// argument of the command is not broken at its hyphens ("--" at the end of
// one line, "start-at" on the next), unless it is too long for a line.
func metaHTML(w io.Writer, f *results.File) { metaLinesHTML(w, reportHeaderLines(f)) }

// metaLinesHTML writes header lines (headerLines) as a definition list.
func metaLinesHTML(w io.Writer, lines [][2]string) {
	fmt.Fprintln(w, `<dl class="meta">`)
	for _, l := range lines {
		v := html.EscapeString(l[1])
		switch l[0] {
		case "Command":
			args := strings.Fields(l[1])
			for i, a := range args {
				args[i] = html.EscapeString(a)
				if utf8.RuneCountInString(a) <= 40 {
					args[i] = `<span class="arg">` + args[i] + "</span>"
				}
			}
			v = "<code>" + strings.Join(args, " ") + "</code>"
		}
		fmt.Fprintf(w, "<dt>%s</dt><dd>%s</dd>\n", html.EscapeString(l[0]), v)
	}
	fmt.Fprintln(w, "</dl>")
}

// chartsHTML writes the charts section: every chart as inline SVG with its
// caption lines; nothing without charts.
func chartsHTML(bw io.Writer, cs []*chart) error {
	if len(cs) > 0 {
		fmt.Fprintln(bw, "<h2>Charts</h2>")
		fmt.Fprintln(bw, `<div class="charts">`)
		for _, c := range cs {
			svg, err := c.inlineSVG()
			if err != nil {
				return err
			}
			fmt.Fprintf(bw, "<figure id=\"%s\" aria-label=\"%s\">\n%s\n", c.name, html.EscapeString(c.title), svg)
			if len(c.notes) > 0 {
				fmt.Fprintln(bw, "<figcaption>")
				for i, n := range c.notes {
					if i > 0 {
						fmt.Fprint(bw, "<br>")
					}
					fmt.Fprintln(bw, html.EscapeString(n))
				}
				fmt.Fprintln(bw, "</figcaption>")
			}
			fmt.Fprintln(bw, "</figure>")
		}
		fmt.Fprintln(bw, "</div>")
	}
	return nil
}
