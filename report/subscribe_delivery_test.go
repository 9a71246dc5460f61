package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/relaybench/relaybench/results"
)

// deliveryFile is a compare of two relays' subscribe phases as the
// workload writes them: the publishers' OK latency (primary) and the live
// delivery latency, in the phase and in its groups, the delivery latency
// four times the OK one so that a column of the wrong one shows.
func deliveryFile() *results.File {
	sub := func(seed uint64, med float64) results.Phase {
		lat := func() map[string]*results.Histogram {
			return map[string]*results.Histogram{"ok": hist(seed, 500, med, 0.3), "deliver": hist(seed+1, 2000, 4*med, 0.3)}
		}
		return results.Phase{Name: "subscribe", Workload: "subscribe", Duration: 4e9,
			Counts:       map[string]int64{"accepted": 500, "expected": 2000, "deliveries": 2000},
			Rates:        map[string]float64{"events_per_sec": 125, "deliveries_per_sec": 500},
			Latency:      lat(),
			Groups:       []results.Group{{Name: "kind", Counts: map[string]int64{"deliveries": 2000}, Latency: lat()}},
			Verification: &results.Verification{Verified: true, Checked: 10, Expected: 2000, Returned: 2000, Passed: true}}
	}
	f := oneRun("compare", nil, sub(1, 500e3))
	r := f.Runs[0]
	r.Relay.Name = "strfry"
	r.Phases = []results.Phase{sub(5, 900e3)}
	f.Runs = append(f.Runs, r)
	return f
}

// section is the part of s from the first line that is head up to the
// first later line starting with next ("" when s has no such line).
func section(s, head, next string) string {
	i := strings.Index(s, head)
	if i < 0 {
		return ""
	}
	s = s[i+len(head):]
	if j := strings.Index(s, next); j >= 0 {
		s = s[:j]
	}
	return s
}

// A compare's Subscribe table, in every format compare writes, shows the
// live delivery latency's p50 and p99 beside the publishers' OK latency
// (it was only in the "Subscribe by group" table); CSV and JSON carry it as
// a latency of its own.
func TestCompareSubscribeDeliveryLatency(t *testing.T) {
	f := deliveryFile()
	files := []*results.File{f}
	var md, html, csv, js bytes.Buffer
	for _, err := range []error{Markdown(&md, files, Options{}), HTML(&html, files, Options{}), CSV(&csv, files), JSON(&js, files, Options{})} {
		if err != nil {
			t.Fatal(err)
		}
	}
	sections := map[string]string{
		"brief summary": section(summaryText(t, f, SummaryOptions{Brief: true}), "\nSubscribe:\n", "\n\n"),
		"full summary":  section(summaryText(t, f, SummaryOptions{}), "\nSubscribe:\n", "\n\n"),
		"markdown":      section(md.String(), "### Subscribe\n", "###"),
		"html":          section(html.String(), "<h3>Subscribe</h3>", "<h3>"),
	}
	var want []string
	for _, r := range f.Runs {
		d := r.Phases[0].Latency["deliver"]
		for _, q := range []float64{50, 99} {
			v, _ := latQ(d, q)
			want = append(want, fmtDur(float64(v)))
		}
	}
	for name, s := range sections {
		if s == "" {
			t.Errorf("%s: no Subscribe table", name)
			continue
		}
		for _, w := range append([]string{"Delivery p50", "Delivery p99", "OK p50"}, want...) {
			if !strings.Contains(s, w) {
				t.Errorf("%s: the Subscribe table lacks %q:\n%s", name, w, s)
			}
		}
	}
	if n := strings.Count(csv.String(), "deliver:count="); n < 2 {
		t.Errorf("CSV: the delivery latency is in %d rows, want at least one per relay:\n%s", n, csv.String())
	}
	if n := strings.Count(js.String(), `"deliver"`); n < 2 {
		t.Errorf("JSON: the delivery latency is missing:\n%s", js.String())
	}
}

// The brief summary's Subscribe table leaves out "Deliveries expected"
// where it equals Deliveries for every relay (it says only that none was
// lost, as the verification does), and keeps it where a relay fell short;
// the full summary always has it.
func TestBriefSubscribeExpectedOnlyWhenShort(t *testing.T) {
	f := deliveryFile()
	table := func(o SummaryOptions) string { return section(summaryText(t, f, o), "\nSubscribe:\n", "\n\n") }
	if s := table(SummaryOptions{Brief: true}); strings.Contains(s, "Deliveries expected") || !strings.Contains(s, "Deliveries") {
		t.Errorf("brief, nothing lost: want Deliveries without Deliveries expected:\n%s", s)
	}
	if s := table(SummaryOptions{}); !strings.Contains(s, "Deliveries expected") {
		t.Errorf("full: no Deliveries expected:\n%s", s)
	}
	f.Runs[1].Phases[0].Counts["deliveries"] = 1990
	if s := table(SummaryOptions{Brief: true}); !strings.Contains(s, "Deliveries expected") {
		t.Errorf("brief, 10 deliveries lost: no Deliveries expected:\n%s", s)
	}
}

// The Markdown a compare writes folds a wide phase table's all-zero
// columns into a note under it, as the HTML does: a Subscribe table of 36
// columns, 17 of them zeros, put the delivery latency past the screen's
// edge.
func TestMarkdownFoldsZeroColumns(t *testing.T) {
	var md bytes.Buffer
	if err := Markdown(&md, []*results.File{wideFile()}, Options{}); err != nil {
		t.Fatal(err)
	}
	s := section(md.String(), "### Subscribe\n", "###")
	if !strings.Contains(s, "0 throughout (– where not recorded): Cancelled, Duplicated, Failed,") || strings.Contains(s, "| Cancelled |") {
		t.Errorf("the zero columns are not folded into a note:\n%s", s)
	}
}
