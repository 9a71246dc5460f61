package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/relaybench/relaybench/internal/sysinfo"
	"github.com/relaybench/relaybench/results"
)

// A results file of a build with no version information (go run) shows
// that in every report's Tool line, without --version's advice on how to
// stamp one: the Markdown and HTML reports carried "…: go build in a git
// checkout or go install …@VERSION stamps the version".
func TestToolLineUnstampedWithoutAdvice(t *testing.T) {
	f := oneRun("run", nil, results.Phase{Name: "publish", Duration: 1e9, Counts: map[string]int64{"sent": 5, "accepted": 5}})
	f.Tool = results.Tool{Name: "relaybench", Version: sysinfo.Unstamped, GoVersion: "go1.26.8"}
	const want = "relaybench dev, built without version control information (go1.26.8)"
	var md, h bytes.Buffer
	if err := Markdown(&md, []*results.File{f}, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := HTML(&h, []*results.File{f}, Options{}); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"markdown": md.String(), "html": h.String(), "summary -v": summaryText(t, f, SummaryOptions{})} {
		if !strings.Contains(out, want) || strings.Contains(out, "stamps the version") {
			t.Errorf("%s: want the Tool line %q without the advice:\n%s", name, want, out)
		}
	}
	f.Tool.Version = "v0.1.0"
	if s := summaryText(t, f, SummaryOptions{}); !strings.Contains(s, "Tool:     relaybench v0.1.0 (go1.26.8)") {
		t.Errorf("a stamped version changed:\n%s", s)
	}
}

// A check of NIP-50's search that rests on NIP-01's filter rule is listed
// under NIP 50 with the rule's NIP beside it, in the terminal table and
// the reports' table, not under NIP 01 alone; NIP-01's own checks keep
// "01", and the finding still quotes NIP-01's sentence.
func TestConformanceTableNamesTheCheckedNIP(t *testing.T) {
	f := baseFile("conformance")
	f.Runs = []results.Run{{Relay: results.Relay{Name: "strfry", URL: "ws://127.0.0.1:1"}, Conformance: []results.Check{
		{ID: "req.ids-and-conditions", NIP: 1, Level: "MUST", Status: results.CheckPass},
		{ID: "nip50.search-and-conditions", NIP: 1, Level: "MUST", Sentence: "All conditions of a filter…", Status: results.CheckFail},
		{ID: "nip45.count-form", NIP: 45, Level: "MUST", Status: results.CheckPass}}}}
	var md bytes.Buffer
	if err := Markdown(&md, []*results.File{f}, Options{}); err != nil {
		t.Fatal(err)
	}
	s := summaryText(t, f, SummaryOptions{Brief: true})
	for name, out := range map[string]string{"summary": s, "markdown": md.String()} {
		for _, row := range [][2]string{{"search-and-conditions", "50 (NIP-01 rule)"}, {"req.ids-and-conditions", "01"}, {"nip45.count-form", "45"}} {
			if !lineHas(out, row[0], row[1]) {
				t.Errorf("%s: %s not listed under %q:\n%s", name, row[0], row[1], out)
			}
		}
	}
	if !strings.Contains(s, "NIP-01: \"All conditions of a filter…\"") {
		t.Errorf("the finding does not quote NIP-01's sentence:\n%s", s)
	}
}

// lineHas reports whether a line of s holds both a and b.
func lineHas(s, a, b string) bool {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, a) && strings.Contains(l, " "+b+" ") {
			return true
		}
	}
	return false
}
