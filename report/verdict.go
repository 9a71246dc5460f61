package report

import (
	"fmt"
	"html"
	"io"
	"strings"

	"github.com/relaybench/relaybench/judge"
	"github.com/relaybench/relaybench/results"
)

// maxVerdictReasons is the most reasons a report lists under its verdict
// line; the rest are counted ("… and 3 more"), as in the terminal summary.
const maxVerdictReasons = 12

// passedWhy is the reason of a passed verdict, as the terminal summary says it.
const passedWhy = "all requested work ran and every check passed"

// verdictHead is the verdict line of a results file, the one the terminal
// summary ends with: "Verdict: PASSED (exit 0): all requested work ran and
// every check passed", "Verdict: THRESHOLDS FAILED (exit 5)". The verdict is
// the one the run (or merge, or report --threshold) judged and stored in
// the file: the report never judges again. A file written before verdicts
// were stored says so.
func verdictHead(f *results.File) string {
	v := f.Verdict
	switch {
	case v == nil:
		return "Verdict: not recorded (the results file holds none: written by an older relaybench)"
	case v.Status == judge.Passed:
		return "Verdict: PASSED (exit 0): " + passedWhy
	}
	return fmt.Sprintf("Verdict: %s (exit %d)", strings.ToUpper(v.Outcome), v.Status)
}

// verdictReasons are the reasons listed under the verdict line, at most
// maxVerdictReasons, and how many more there are.
func verdictReasons(f *results.File) (rs []string, more int) {
	if f.Verdict == nil || f.Verdict.Status == judge.Passed {
		return nil, 0
	}
	rs = f.Verdict.Reasons
	if len(rs) > maxVerdictReasons {
		return rs[:maxVerdictReasons], len(rs) - maxVerdictReasons
	}
	return rs, 0
}

// verdictClass is the CSS class of a verdict's banner: passed, failed
// (wrong answers, incomplete, error, interrupted) or limits (thresholds
// failed: the work was right, a limit was not met).
func verdictClass(f *results.File) string {
	switch {
	case f.Verdict == nil:
		return "unknown"
	case f.Verdict.Status == judge.Passed:
		return "passed"
	case f.Verdict.Status == judge.ThresholdsFailed:
		return "limits"
	}
	return "failed"
}

// verdictCSS styles the verdict banner of an HTML report.
const verdictCSS = `.verdict{border-left:6px solid #888;background:#f4f5f7;padding:8px 14px;margin:10px 0 14px}
.verdict p{margin:0;font-size:16px;font-weight:700}.verdict ul{margin:4px 0 0;padding-left:20px}
.verdict.passed{border-color:#1a7f37;background:#effaf2}.verdict.passed p{color:#1a7f37}
.verdict.failed{border-color:#b00020;background:#fff4f4}.verdict.failed p{color:#b00020}
.verdict.limits{border-color:#b35900;background:#fff8ef}.verdict.limits p{color:#8a4500}`

// verdictHTML writes the verdict banner of each file (labelled with its
// file number when there are several), right under the report's title.
func verdictHTML(w io.Writer, files []*results.File) {
	for i, f := range files {
		label := ""
		if len(files) > 1 {
			label = fmt.Sprintf("File %d: ", i+1)
		}
		fmt.Fprintf(w, "<div class=\"verdict %s\" id=\"verdict-%d\">\n<p>%s</p>\n", verdictClass(f), i+1, html.EscapeString(label+verdictHead(f)))
		rs, more := verdictReasons(f)
		if len(rs) > 0 {
			fmt.Fprintln(w, "<ul>")
			for _, r := range rs {
				fmt.Fprintf(w, "<li>%s</li>\n", html.EscapeString(r))
			}
			if more > 0 {
				fmt.Fprintf(w, "<li>… and %d more (every reason is in the results file)</li>\n", more)
			}
			fmt.Fprintln(w, "</ul>")
		}
		fmt.Fprintln(w, "</div>")
	}
}

// verdictMarkdown writes the verdict line of each file, in bold, with its
// reasons as a list.
func verdictMarkdown(w io.Writer, files []*results.File) {
	for i, f := range files {
		label := ""
		if len(files) > 1 {
			label = fmt.Sprintf("File %d: ", i+1)
		}
		fmt.Fprintf(w, "**%s**\n\n", mdText(label+verdictHead(f)))
		rs, more := verdictReasons(f)
		for _, r := range rs {
			fmt.Fprintf(w, "- %s\n", mdText(r))
		}
		if more > 0 {
			fmt.Fprintf(w, "- … and %d more (every reason is in the results file)\n", more)
		}
		if len(rs) > 0 {
			fmt.Fprintln(w)
		}
	}
}
