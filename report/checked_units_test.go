package report

import (
	"encoding/csv"
	"slices"
	"strings"
	"testing"

	"github.com/relaybench/relaybench/results"
)

// TestVerificationCheckedUnits: the Verification table's Checked column
// names its unit per phase, which differs by kind (walk 11: "100", "10"
// and "6" read as one unit for queries, subscriptions and a negentropy
// sync's rounds); a repeated run's spread keeps one unit.
func TestVerificationCheckedUnits(t *testing.T) {
	ver := func(n int64) *results.Verification {
		return &results.Verification{Verified: true, Passed: true, Checked: n, Expected: 10, Returned: 10}
	}
	run := func(q int64) *results.Run {
		return &results.Run{Phases: []results.Phase{
			{Name: "query", Workload: "query", Verification: ver(q)},
			{Name: "subscribe", Workload: "subscribe", Verification: ver(10)},
			{Name: "negentropy/delta", Workload: "negentropy", Verification: ver(6)},
			{Name: "count", Workload: "count", Verification: ver(1)},
			{Name: "custom", Workload: "custom", Verification: ver(3)},
		}}
	}
	tb := verificationTable([]*relayRuns{{key: "a", runs: []*results.Run{run(100)}}, {key: "b", runs: []*results.Run{run(90), run(110), run(100)}}})
	var got []string
	for _, r := range tb.rows {
		got = append(got, r[0]+" "+r[1]+": "+r[2])
	}
	s := strings.Join(got, "\n")
	for _, want := range []string{"a query: 100 queries", "b query: 100 queries (90–110)", "a subscribe: 10 subscriptions",
		"a negentropy/delta: 6 syncs and read-backs", "a count: 1 COUNT", "a custom: 3 answers"} {
		if !strings.Contains(s, want) {
			t.Errorf("lacks %q:\n%s", want, s)
		}
	}
}

// A partial check (-skip-publish: answers checked for validity and filter
// match, nothing known of what was owed) shows what it counted in the
// Markdown and HTML Verification table, as the terminal does, and a dash
// only for Expected, Missing and Extra (a walk read a row of dashes beside
// the terminal's "500 answers checked").
func TestPartialVerificationShowsItsCounts(t *testing.T) {
	p := results.Phase{Name: "query", Workload: "query", Duration: 1e9, Counts: map[string]int64{"queries": 500},
		Verification: &results.Verification{Checked: 500, Returned: 47581, Passed: true, State: results.VerificationPassed}}
	var md strings.Builder
	if err := Markdown(&md, []*results.File{oneRun("run", nil, p)}, Options{}); err != nil {
		t.Fatal(err)
	}
	var row string
	for _, l := range strings.Split(md.String(), "\n") {
		if strings.Contains(l, "47,581") {
			row = l
		}
	}
	cells := strings.Split(strings.Trim(row, "| "), " | ")
	if len(cells) != 12 || !strings.HasPrefix(cells[2], "500 ") || cells[3] != "–" || cells[4] != "47,581" || cells[5] != "–" || cells[6] != "–" || cells[7] != "0" || cells[8] != "0" || cells[9] != "0" {
		t.Errorf("partial verification row %q (%d cells), want 500 checked, 47,581 returned, 0 faults, dashes for Expected, Missing, Extra:\n%s", row, len(cells), md.String())
	}
	var csvOut strings.Builder
	if err := CSV(&csvOut, []*results.File{oneRun("run", nil, p)}); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(strings.NewReader(csvOut.String())).ReadAll()
	if err != nil || len(recs) < 2 {
		t.Fatalf("CSV: %v %q", err, csvOut.String())
	}
	col := func(name string) string { return recs[1][slices.Index(recs[0], name)] }
	if col("verification_state") != "partial" || col("checked") != "500" || col("returned") != "47581" || col("invalid") != "0" || col("expected") != "" || col("missing") != "" {
		t.Errorf("CSV of a partial check: state %q checked %q returned %q invalid %q expected %q missing %q", col("verification_state"), col("checked"), col("returned"), col("invalid"), col("expected"), col("missing"))
	}
}

// Search's recall is a share, said in percent as its note says it (a walk
// read "Recall: 1.00" beside "recall 99.5%").
func TestRecallIsAShare(t *testing.T) {
	p := results.Phase{Name: "search", Workload: "search", Duration: 1e9, Counts: map[string]int64{"queries": 50},
		Rates: map[string]float64{"recall": 0.995, "searches_per_sec": 50}}
	s := summaryText(t, oneRun("search", nil, p), SummaryOptions{})
	if !strings.Contains(s, "99.50%") || strings.Contains(s, ": 1.00\n") || strings.Contains(s, "1.00 ") && strings.Contains(s, "Recall: 1.00") {
		t.Errorf("recall not in percent:\n%s", s)
	}
}
