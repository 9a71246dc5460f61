package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/relaybench/relaybench/results"
)

// hostileReason is what a relay may put in an OK or CLOSED reason: HTML,
// Markdown, a table pipe, a code fence, newlines, terminal escapes, a bidi
// override and a spreadsheet formula.
const hostileReason = "=HYPERLINK(\"x\") <script>alert(1)</script> | col ```fence``` [click](javascript:alert(1))\n# heading\r\x1b[2J\u202egnp.exe"

// conformanceFile is a run of two relays with conformance checks: one
// relay fails a MUST with a hostile reason in its detail and evidence.
func conformanceFile() *results.File {
	f := singleFile()
	good := f.Runs[0]
	good.Relay.Name = "good"
	bad := f.Runs[0]
	bad.Relay.Name = "evil|relay"
	sentence := "`CLOSED` messages MUST be sent in response to a `REQ` when the relay refuses to fulfill it."
	good.Conformance = []results.Check{
		{ID: "req.malformed-closed", NIP: 1, Level: "MUST", Sentence: sentence, Status: results.CheckPass},
		{ID: "nip09.deletion", NIP: 9, Level: "SHOULD", Sentence: "Relays SHOULD delete.", Status: results.CheckNotAnnounced},
	}
	bad.Conformance = []results.Check{
		{ID: "req.malformed-closed", NIP: 1, Level: "MUST", Sentence: sentence, Status: results.CheckFail,
			Detail: "NOTICE " + hostileReason, Evidence: []string{`> ["REQ","x",1]`, `< ["NOTICE",` + hostileReason + `]`}, EvidenceCut: true},
		{ID: "nip09.deletion", NIP: 9, Level: "SHOULD", Sentence: "Relays SHOULD delete.", Status: results.CheckUnknown, Detail: "no EOSE"},
	}
	f.Runs = []results.Run{good, bad}
	return f
}

// TestConformanceTable: one row per check, one column per relay, with each
// status; a failure's finding names the check, the sentence and the
// evidence in every format.
func TestConformanceTable(t *testing.T) {
	f := conformanceFile()
	tb := conformanceTable(groupRuns([]*results.File{f}))
	if tb == nil || len(tb.rows) != 2 || strings.Join(tb.head, ",") != "Check,NIP,Level,good,evil|relay" {
		t.Fatalf("table %+v", tb)
	}
	if got := strings.Join(tb.rows[0], ","); got != "req.malformed-closed,01,MUST,pass,FAIL" {
		t.Errorf("row 0: %s", got)
	}
	if got := strings.Join(tb.rows[1], ","); got != "nip09.deletion,09,SHOULD,not announced,unknown" {
		t.Errorf("row 1: %s", got)
	}
	var b bytes.Buffer
	if err := Markdown(&b, []*results.File{f}, Options{}); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{"### Conformance", "| req.malformed-closed | 01 | MUST | pass | FAIL |", "## Conformance findings",
		`evil\|relay: req.malformed-closed FAIL (NIP-01 MUST)`, "> NIP-01: \\`CLOSED\\` messages MUST", "evil\\|relay: nip09.deletion unknown"} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q", want)
		}
	}
	if strings.Contains(md, "good: nip09.deletion") {
		t.Error("Markdown lists a check the relay does not announce as a finding")
	}
	b.Reset()
	if err := Summary(&b, f); err != nil {
		t.Fatal(err)
	}
	if s := b.String(); !strings.Contains(s, "FAIL req.malformed-closed (NIP-01 MUST)") || !strings.Contains(s, "Conformance:") ||
		!strings.Contains(s, "(more was exchanged than the evidence keeps)") {
		t.Errorf("summary:\n%s", s)
	}
	b.Reset()
	if err := JUnit(&b, f); err != nil {
		t.Fatal(err)
	}
	if s := b.String(); !strings.Contains(s, `name="req.malformed-closed" classname="relaybench.conformance.evil|relay"`) ||
		!strings.Contains(s, `<failure message="FAIL (NIP-01 MUST): NOTICE`) || !strings.Contains(s, `<error message="unknown (NIP-09 SHOULD): no EOSE"`) {
		t.Errorf("JUnit:\n%s", s)
	}
}

// TestConformanceInert: the relay's words in a check's detail and
// evidence are inert in every format.
func TestConformanceInert(t *testing.T) {
	f := conformanceFile()
	var b bytes.Buffer
	if err := Markdown(&b, []*results.File{f}, Options{}); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"\x1b", "\u202e", "\n# heading", "\r"} {
		if strings.Contains(b.String(), bad) {
			t.Errorf("Markdown holds %q raw", bad)
		}
	}
	// The detail is escaped text; the evidence a code span fenced by more
	// backticks than it holds in a row (shown as is, nothing in it acts).
	for _, line := range strings.Split(b.String(), "\n") {
		if strings.Contains(line, "alert(1)") && !strings.HasPrefix(line, "- ```` ") &&
			(strings.Contains(line, "<script") || strings.Contains(line, "[click](") || strings.Contains(line, "```")) {
			t.Errorf("Markdown line holds the relay's markup outside a code span: %s", line)
		}
	}
	if !strings.Contains(b.String(), "- ```` < [\"NOTICE\",=HYPERLINK") {
		t.Error("Markdown lacks the evidence as a code span")
	}
	b.Reset()
	if err := HTML(&b, []*results.File{f}, Options{}); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"<script", "\x1b", "\u202e", "\r"} {
		if strings.Contains(b.String(), bad) {
			t.Errorf("HTML holds %q raw", bad)
		}
	}
	if !strings.Contains(b.String(), "<h2>Conformance findings</h2>") || !strings.Contains(b.String(), `<td class="warn">FAIL</td>`) {
		t.Error("HTML lacks the findings or the failed cell")
	}
	b.Reset()
	if err := Summary(&b, f); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"\x1b", "\u202e", "\r"} {
		if strings.Contains(b.String(), bad) {
			t.Errorf("summary holds %q", bad)
		}
	}
	b.Reset()
	if err := JUnit(&b, f); err != nil {
		t.Fatal(err)
	}
	for _, c := range b.String() {
		if c < 0x20 && c != '\n' || c == 0x7f || c == '\u202e' {
			t.Fatalf("JUnit holds control character %q", c)
		}
	}
	_, rows := csvOf(t, f)
	var checks int
	for _, r := range rows {
		for _, c := range r {
			if c != "" && strings.ContainsRune("=+@", rune(c[0])) || strings.ContainsAny(c, "\x1b\r\n\u202e") {
				t.Errorf("CSV cell %q is not inert", c)
			}
		}
		if r["phase"] == "conformance" {
			checks++
			if r["relay"] == "evil|relay" && r["group"] == "req.malformed-closed" &&
				(r["status"] != "FAIL" || r["level"] != "MUST" || r["nip"] != "1" || !strings.Contains(r["evidence"], `> ["REQ","x",1]`)) {
				t.Errorf("CSV check row: %v", r)
			}
		}
	}
	if checks != 4 {
		t.Errorf("CSV has %d check rows, want 4", checks)
	}
	b.Reset()
	if err := JSON(&b, []*results.File{f}, Options{}); err != nil {
		t.Fatal(err)
	}
	var rep JSONReport
	if err := json.Unmarshal(b.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if got := rep.Files[0].Runs[1].Conformance; len(got) != 2 || got[0].Detail != "NOTICE "+hostileReason {
		t.Errorf("JSON report conformance: %+v", got)
	}
}
