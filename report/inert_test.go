package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/relaybench/relaybench/internal/testkit"
	"github.com/relaybench/relaybench/results"
)

// hostileFile is a run against a relay whose NIP-11 and reasons are built
// to break outputs: HTML tags, Markdown table pipes, links, code fences,
// newlines, terminal escapes, a bidi override and spreadsheet formulas.
func hostileFile() *results.File {
	f := singleFile()
	r := &f.Runs[0]
	r.Relay.Name = "evil|relay"
	r.Relay.Software = "<script>alert(1)</script>"
	r.Relay.Version = "=HYPERLINK(\"http://x\")|`v`"
	r.Notes = append(r.Notes, "OK reason: <img src=x onerror=alert(1)> [click](javascript:alert(1)) | col\n# heading\x1b[2J\u202egnp.exe")
	p := &r.Phases[1]
	p.Errors = []string{"NOTICE: <iframe src=//x></iframe>\r\n| a | b |"}
	p.Verification.Notes = append(p.Verification.Notes, "CLOSED: @SUM(A1:A9) `code` ![img](x)")
	p.Groups[0].Name = "+cmd|' /C calc'!A0"
	return f
}

// TestRelayStringsInertInMarkdown: no tag, link, column or line a relay
// sent survives into the Markdown report or the Markdown comparison.
func TestRelayStringsInertInMarkdown(t *testing.T) {
	f := hostileFile()
	var b bytes.Buffer
	if err := Markdown(&b, []*results.File{f}, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := Compare(&b, []*results.File{f}, []*results.File{f}, "md"); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, bad := range []string{"<script", "<img", "<iframe", "[click](", "click](javascript", "![img]", "\x1b", "\u202e", "\n# heading", "`code`", "\r"} {
		if strings.Contains(out, bad) {
			t.Errorf("Markdown holds %q raw", bad)
		}
	}
	for _, want := range []string{"&lt;script&gt;", `evil\|relay`, `\[click\]`} {
		if !strings.Contains(out, want) && !strings.Contains(out, strings.ReplaceAll(want, "&gt;", ">")) {
			t.Errorf("Markdown lacks the escaped %q", want)
		}
	}
	// Every table row has as many unescaped pipes as its header.
	cols := -1
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, "|") {
			cols = -1
			continue
		}
		n := strings.Count(line, "|") - strings.Count(line, `\|`)
		if cols == -1 {
			cols = n
		} else if n != cols {
			t.Errorf("table row with %d columns, header %d: %s", n, cols, line)
		}
	}
}

// TestRelayStringsInertElsewhere: the CSV has no cell a spreadsheet reads
// as a formula, the HTML report (charts included) no raw tag, and the
// terminal summary and the JUnit XML no control character a terminal or an
// XML reader acts on.
func TestRelayStringsInertElsewhere(t *testing.T) {
	f := hostileFile()
	var b bytes.Buffer
	if err := CSV(&b, []*results.File{f}); err != nil {
		t.Fatal(err)
	}
	testkit.WantInertCSV(t, &b)
	b.Reset()
	h := hostileFile()
	h.Runs[0].Relay.Name = "<script>alert(1)</script>" // also the charts' legend
	if err := HTML(&b, []*results.File{h}, Options{}); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"<script>alert", "<img", "<iframe"} {
		if strings.Contains(b.String(), bad) {
			t.Errorf("HTML holds %q raw", bad)
		}
	}
	b.Reset()
	// A results file may have been written by hand: the summary cleans
	// what it prints.
	f.Runs[0].Relay.Software = "red \x1b[31mALERT\x1b[0m\u202e"
	if err := Summary(&b, f); err != nil {
		t.Fatal(err)
	}
	if err := Compare(&b, []*results.File{f}, []*results.File{f}, "text"); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"\x1b", "\u202e", "\r"} {
		if strings.Contains(b.String(), bad) {
			t.Errorf("terminal output holds %q", bad)
		}
	}
	if !strings.Contains(b.String(), `\x1b[31mALERT`) {
		t.Error("terminal output lacks the escaped relay string")
	}
	b.Reset()
	f.Runs[0].Phases[1].Verification.Missing, f.Runs[0].Phases[1].Verification.Passed = 1, false
	f.Runs[0].Phases[1].Verification.Notes = append(f.Runs[0].Phases[1].Verification.Notes, "bell\a esc\x1b]0;title\a")
	if err := JUnit(&b, f); err != nil {
		t.Fatal(err)
	}
	for _, c := range b.String() {
		if c < 0x20 && c != '\n' || c == 0x7f {
			t.Fatalf("JUnit holds control character %q", c)
		}
	}
}

// TestNotVerifiedEverywhere: a phase whose every REQ was refused checked no
// answer. No output calls it passed: the summary, Markdown, CSV and JSON
// say "not verified", JUnit fails its case, and the results file stores
// passed false with state "not verified".
func TestNotVerifiedEverywhere(t *testing.T) {
	f := singleFile()
	p := &f.Runs[0].Phases[1]
	p.Verification = &results.Verification{Verified: true, Passed: true, Notes: []string{"100 queries did not end with EOSE"}} // as a build before state wrote it
	p.Groups = nil
	var b bytes.Buffer
	if err := Summary(&b, f); err != nil {
		t.Fatal(err)
	}
	if s := b.String(); !strings.Contains(s, "Verification:") || !strings.Contains(s, "NOT VERIFIED: no answer was checked") || strings.Contains(s, "PASSED — checked 0") {
		t.Errorf("summary:\n%s", s)
	}
	b.Reset()
	if err := Markdown(&b, []*results.File{f}, Options{}); err != nil {
		t.Fatal(err)
	}
	if s := b.String(); !strings.Contains(s, "| NOT VERIFIED |") || !strings.Contains(s, "query: not verified") {
		t.Errorf("Markdown lacks NOT VERIFIED:\n%s", s)
	}
	_, rows := csvOf(t, f)
	found := false
	for _, r := range rows {
		if r["phase"] == "query" && r["group"] == "" {
			found = true
			if r["verification_passed"] != "false" || r["verification_state"] != "not verified" || !strings.Contains(r["status"], "not verified") {
				t.Errorf("CSV query row: passed %q state %q status %q", r["verification_passed"], r["verification_state"], r["status"])
			}
		}
	}
	if !found {
		t.Error("CSV has no query row")
	}
	b.Reset()
	if err := JUnit(&b, f); err != nil {
		t.Fatal(err)
	}
	if s := b.String(); !strings.Contains(s, `<failure message="not verified: no answer was checked`) {
		t.Errorf("JUnit does not fail the unverified phase:\n%s", s)
	}
	b.Reset()
	if err := JSON(&b, []*results.File{f}, Options{}); err != nil { // as read from an old file: no state
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"state": "not verified"`) || !strings.Contains(b.String(), `"passed": false`) {
		t.Error("JSON report of an old file lacks the state")
	}
	back := roundTrip(t, f)
	v := back.Runs[0].Phases[1].Verification
	if v.Passed || v.State != results.VerificationNotVerified {
		t.Errorf("results file: passed %v state %q", v.Passed, v.State)
	}
	b.Reset()
	if err := JSON(&b, []*results.File{back}, Options{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"state": "not verified"`) {
		t.Error("JSON report lacks the state")
	}
}
