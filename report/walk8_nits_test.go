package report

import (
	"bytes"
	"fmt"
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

// Every publish phase's block leads with its Events Published line in the
// brief summary, however the phase is named and whatever it counted: run's
// publish, mixed's preload (the corpus the queries are drawn from, its
// note beside), load's query corpus, a warm-up, one where every count
// restates the accepted (nothing lost: restatesAccepted) and one that lost
// events. A newcomer reported mixed's preload block starting at Duration.
func TestEveryPublishPhaseSaysEventsPublished(t *testing.T) {
	all := map[string]int64{"sent": 10000, "accepted": 10000, "refused": 0, "timed_out": 0, "failed": 0, "not_sent": 0, "cancelled": 0,
		"bytes_sent": 14 << 20, "bytes_accepted": 14 << 20, "planned": 10000, "intended": 10000}
	lost := map[string]int64{"sent": 900, "accepted": 850, "refused": 50, "planned": 1000, "not_sent": 100}
	for _, p := range []results.Phase{
		{Name: "publish", Workload: "publish", Counts: all},
		{Name: "publish", Workload: "publish", Counts: all, Notes: []string{"preload for the mixed workload: the corpus the queries are drawn from"}},
		{Name: "publish (query corpus)", Workload: "publish", Counts: all},
		{Name: "warm-up", Workload: "publish", Counts: all},
		{Name: "publish", Workload: "publish", Counts: lost, Refused: map[string]int64{"duplicate": 50}},
	} {
		p.Duration = 5290 * 1e6
		p.Rates = map[string]float64{"events_per_sec": 1890}
		f := oneRun("mixed", nil, p, results.Phase{Name: "mixed", Workload: "mixed", Duration: 9e9})
		s := summaryText(t, f, SummaryOptions{Brief: true})
		want := fmt.Sprintf("  Events Published: %s accepted of %s sent", fmtInt(p.Counts["accepted"]), fmtInt(p.Counts["sent"]))
		i := strings.Index(s, want)
		if i < 0 || !strings.Contains(s[i:], "\n  Duration: 5.29s") {
			t.Errorf("%s (%v): no %q before its Duration:\n%s", p.Name, p.Notes, want, s)
		}
	}
}
