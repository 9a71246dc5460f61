package report

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/relaybench/relaybench/results"
)

// labelledFile is two relays' subscribe, count and lifecycle phases holding
// the results keys whose table headers were raw keys.
func labelledFile() *results.File {
	sub := results.Phase{Name: "subscribe", Workload: "subscribe", Duration: 4e9,
		Counts: map[string]int64{"accepted": 10000, "expected": 39200, "deliveries": 39200, "before_eose": 3,
			"client_bytes_per_subscription": 12698, "client_rss_idle_bytes": 12698000, "foreign_oks": 1},
		Rates:        map[string]float64{"events_per_sec": 2223, "deliveries_per_sec": 8716, "fanout": 3.92, "mb_per_sec": 3.14},
		Latency:      map[string]*results.Histogram{"deliver": hist(1, 500, 800e3, 0.5)},
		Verification: &results.Verification{Verified: true, Checked: 50, Expected: 442400, Returned: 442400, Passed: true}}
	cnt := results.Phase{Name: "count", Workload: "count", Duration: 2e9,
		Counts: map[string]int64{"counts": 26},
		Rates:  map[string]float64{"count_vs_req_p50": 0.67},
		Groups: []results.Group{{Name: "kind", Counts: map[string]int64{"counts": 13}, Rates: map[string]float64{"count_vs_req_p50": 9.96}}}}
	life := results.Phase{Name: "lifecycle", Workload: "lifecycle", Duration: 1e9,
		Counts: map[string]int64{"accepted": 100},
		Groups: []results.Group{{Name: "read_your_write", Counts: map[string]int64{"events": 100}},
			{Name: "read_after_ok", Counts: map[string]int64{"events": 100}}}}
	f := oneRun("compare", nil, sub, cnt, life)
	r := f.Runs[0]
	r.Relay.Name = "strfry"
	f.Runs = append(f.Runs, r)
	return f
}

// Comparison tables, in every format, head a figure by its label with its
// unit (the brief summary's labels: one source), bytes in KiB/MiB with
// three significant digits and ratios with "×"; results keys stay keys in
// the file.
func TestTableHeadsLabelled(t *testing.T) {
	f := labelledFile()
	var md, html bytes.Buffer
	if err := Markdown(&md, []*results.File{f}, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := HTML(&html, []*results.File{f}, Options{}); err != nil {
		t.Fatal(err)
	}
	text := summaryText(t, f, SummaryOptions{})
	for name, s := range map[string]string{"markdown": md.String(), "html": html.String(), "summary": text} {
		for _, want := range []string{"Deliveries expected", "Deliveries per event", "Publish rate (events/s)",
			"Delivery rate (deliveries/s)", "Delivered before EOSE", "OKs for ids not sent", "Client memory per subscription",
			"12.4 KiB", "Client memory, idle subscriptions", "12.1 MiB", "9.96×", "0.67×", "read your write", "read after OK"} {
			if !strings.Contains(s, want) {
				t.Errorf("%s lacks %q", name, want)
			}
		}
		for _, raw := range []string{"events per sec", "client bytes per subscription", "foreign oks", "before eose",
			"read_your_write", "read_after_ok", "12,698"} {
			if strings.Contains(s, raw) {
				t.Errorf("%s shows the raw %q", name, raw)
			}
		}
	}
	if regexp.MustCompile(`\| (expected|fanout|accepted|mb per sec) \|`).MatchString(md.String()) {
		t.Errorf("markdown heads a column by its raw key:\n%s", md.String())
	}
}

// `relaybench report FILE` (the full summary) leads with the verdict, as
// the brief one does; its rates and latencies have the brief summary's
// labels.
func TestFullSummaryLeadsWithVerdict(t *testing.T) {
	q := queryPhase(1, 600, 28, 30e6, 0)
	q.Rates["events_returned_per_sec"] = 51342.07
	q.Latency["first_event"] = hist(9, 600, 1e6, 0.5)
	f := oneRun("run", nil, q)
	s := summaryText(t, f, SummaryOptions{})
	if !strings.HasPrefix(s, "=== Benchmark Results: PASSED (exit 0) ===\n") {
		t.Errorf("full summary does not lead with the verdict:\n%s", s)
	}
	for _, want := range []string{"Event return rate: 51,342.07 events/second", "First Event Latency: p50"} {
		if !strings.Contains(s, want) {
			t.Errorf("full summary lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "Events returned Rate") || strings.Contains(s, "First event Latency") {
		t.Errorf("full summary keeps an awkward label:\n%s", s)
	}
}

// A subscribe phase's verification says what was checked (deliveries to
// subscriptions), its bandwidth that it is the publishing side's, and
// memory is in GiB like every byte count.
func TestSubscribeSummaryWording(t *testing.T) {
	f := labelledFile()
	f.Runs = f.Runs[:1]
	f.Runs[0].Phases = f.Runs[0].Phases[:1]
	b := summaryText(t, f, SummaryOptions{Brief: true})
	if !strings.Contains(b, "Verification: PASSED (442,400 deliveries to 50 subscriptions checked)\n") {
		t.Errorf("brief verification does not say what was checked:\n%s", b)
	}
	full := summaryText(t, f, SummaryOptions{})
	if !strings.Contains(full, "Publish bandwidth: 2.99 MiB/s\n") || strings.Contains(full, "  Bandwidth:") {
		t.Errorf("subscribe bandwidth not labelled as the publishing side's:\n%s", full)
	}
	if !strings.Contains(full, "8.00 GiB RAM") {
		t.Errorf("memory not in GiB:\n%s", full)
	}
}

// A mixed phase's latency lines say which side and part they time, and
// its group table names "cut".
func TestMixedLatencyAndCutLabelled(t *testing.T) {
	p := mixedPhase()
	p.Groups[0].Counts["cut"] = 5
	full := summaryText(t, oneRun("mixed", nil, p), SummaryOptions{})
	for _, want := range []string{"OK Latency (publishing, together): p50", "Unsent when the part ended"} {
		if !strings.Contains(full, want) {
			t.Errorf("full summary lacks %q:\n%s", want, full)
		}
	}
	if regexp.MustCompile(`(?m)^  OK Latency:`).MatchString(full) || regexp.MustCompile(`\bcut\b`).MatchString(full) {
		t.Errorf("an unlabelled OK Latency or cut column:\n%s", full)
	}
}

// A rate's column header says its unit once: "Accepted/s", not "Accepted
// rate (/s)"; the query-like phases' group tables read as the query
// table's "Queries/s" ("Searches/s", not "Search rate (searches/s)");
// bandwidth is in MiB/s, as byte counts are in MiB, and its cells are
// converted from the results file's MB/s.
func TestRateHeadsAndMiB(t *testing.T) {
	for k, want := range map[string]string{"accepted_per_sec": "Accepted/s", "sent_per_sec": "Sent/s", results.RateMB: "MiB/s",
		results.RateSearches: "Searches/s", "counts_per_sec": "COUNTs/s", "syncs_per_sec": "Syncs/s"} {
		if got := rateHead(k); got != want {
			t.Errorf("rateHead(%s) = %q, want %q", k, got, want)
		}
	}
	if got := rateFmt(results.RateMB)(1.048576); got != "1.00" {
		t.Errorf("1.048576 MB/s shown as %q, want 1.00 (MiB/s)", got)
	}
	p := &results.Phase{Rates: map[string]float64{results.RateMB: 1.048576}}
	if v, ok := bandwidth(p); !ok || v != 1 {
		t.Errorf("bandwidth %v, want 1 MiB/s", v)
	}
}
