package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/relaybench/relaybench/results"
)

// render returns the HTML and Markdown reports of files.
func render(t *testing.T, files ...*results.File) (page, md string) {
	t.Helper()
	var h, m bytes.Buffer
	if err := HTML(&h, files, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := Markdown(&m, files, Options{}); err != nil {
		t.Fatal(err)
	}
	return h.String(), m.String()
}

// TestReportsLeadWithVerdict checks that the HTML and Markdown reports
// state the file's verdict, with its exit status and reasons, before what
// was run; a relay's string in a reason stays text.
func TestReportsLeadWithVerdict(t *testing.T) {
	f := singleFile()
	f.Verdict = &results.Verdict{Status: 3, Outcome: "wrong answers", Reasons: []string{"query: 2 answers missing events", "relay said <script>x</script>"}}
	page, md := render(t, f)
	for _, c := range []struct{ name, doc, want, before string }{
		{"html", page, "<p>Verdict: WRONG ANSWERS (exit 3)</p>", "<h2>What was run</h2>"},
		{"md", md, "**Verdict: WRONG ANSWERS (exit 3)**", "## What was run"},
	} {
		at := strings.Index(c.doc, c.want)
		if at < 0 || at > strings.Index(c.doc, c.before) {
			t.Errorf("%s: want %q before %q:\n%s", c.name, c.want, c.before, c.doc[:min(len(c.doc), 3000)])
		}
		if !strings.Contains(c.doc, "query: 2 answers missing events") {
			t.Errorf("%s: the verdict's reason is missing", c.name)
		}
		if strings.Contains(c.doc, "<script>x") {
			t.Errorf("%s: a reason's markup reached the report", c.name)
		}
	}
	if !strings.Contains(page, `<div class="verdict failed"`) {
		t.Error("html: a wrong-answers verdict is not styled as failed")
	}

	f.Verdict = &results.Verdict{Status: 0, Outcome: "passed"}
	page, md = render(t, f)
	want := "Verdict: PASSED (exit 0): all requested work ran and every check passed"
	if !strings.Contains(page, `<div class="verdict passed" id="verdict-1">`+"\n<p>"+want+"</p>") || !strings.Contains(md, "**"+want+"**") {
		t.Errorf("passed verdict line missing:\n%s\n%s", page[:2000], md[:500])
	}
}

// TestVerdictReasonsBounded lists at most 12 reasons and counts the rest,
// and labels each file's verdict when a report has several.
func TestVerdictReasonsBounded(t *testing.T) {
	f := singleFile()
	var rs []string
	for i := range 20 {
		rs = append(rs, fmt.Sprintf("reason number %d", i))
	}
	f.Verdict = &results.Verdict{Status: 4, Outcome: "incomplete", Reasons: rs}
	g := singleFile()
	g.Verdict = &results.Verdict{Status: 5, Outcome: "thresholds failed", Reasons: []string{"threshold publish.ok.p99<1ms not met: 4ms"}}
	page, md := render(t, f, g)
	for name, doc := range map[string]string{"html": page, "md": md} {
		if !strings.Contains(doc, "reason number 11") || strings.Contains(doc, "reason number 12") || !strings.Contains(doc, "… and 8 more") {
			t.Errorf("%s: want reasons 0–11 and '… and 8 more'", name)
		}
		if !strings.Contains(doc, "File 1: Verdict: INCOMPLETE (exit 4)") || !strings.Contains(doc, "File 2: Verdict: THRESHOLDS FAILED (exit 5)") {
			t.Errorf("%s: each file's verdict should be labelled", name)
		}
	}
}
