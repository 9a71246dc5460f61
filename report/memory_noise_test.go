package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/relaybench/relaybench/results"
)

// The client memory of too few idle subscriptions is a reading under its
// noise floor: the phase's note says it is not measurable, and no format
// shows it as a figure (the HTML Subscribe table listed "Client memory,
// idle subscriptions 272.00 KiB" while the terminal said "not
// measurable"), where a relay's run that held enough shows it everywhere.
// The results file keeps the reading.
func TestMemoryBelowNoiseShownNowhere(t *testing.T) {
	const note = "client memory per subscription not measurable: 10 idle subscriptions held less than 8 MiB, the least that stands out from the noise of the process's resident memory (more subscriptions: the subscribe command's --subscribers)"
	noisy := results.Phase{Name: "subscribe", Workload: "subscribe", Duration: 1e9,
		Counts:  map[string]int64{"accepted": 50, "deliveries": 500, "client_rss_idle_bytes": 272 << 10},
		Latency: map[string]*results.Histogram{"deliver": hist(1, 500, 800e3, 0.5)},
		Notes:   []string{note}}
	f := oneRun("subscribe", nil, noisy)
	for name, s := range reportsOf(t, f) {
		for _, figure := range []string{"272 KiB", "272.00 KiB", "278528", "Client memory", "client_rss_idle_bytes"} {
			if strings.Contains(s, figure) {
				t.Errorf("%s shows the reading under the noise floor (%q)", name, figure)
			}
		}
	}
	if f.Runs[0].Phases[0].Counts["client_rss_idle_bytes"] != 272<<10 {
		t.Error("the results file's reading was changed")
	}
	// Another relay held enough: its figures are shown, the noisy one's
	// cell is a dash.
	held := noisy
	held.Counts = map[string]int64{"accepted": 50, "deliveries": 500, "client_rss_idle_bytes": 20 << 20, "client_bytes_per_subscription": 20 << 10}
	held.Notes = nil
	two := oneRun("compare", nil, noisy)
	r := oneRun("compare", nil, held).Runs[0]
	r.Relay.Name = "strfry"
	two.Runs = append(two.Runs, r)
	for name, s := range reportsOf(t, two) {
		if name == "summary" {
			continue // the brief summary leaves client figures to -v
		}
		want := "20.0 KiB" // human units, raw ones in CSV and JSON
		if name == "csv" || name == "json" {
			want = "20971520"
		}
		if !strings.Contains(s, want) {
			t.Errorf("%s lacks the measured relay's %q", name, want)
		}
		if strings.Contains(s, "272 KiB") || strings.Contains(s, "278528") {
			t.Errorf("%s shows the noisy relay's reading", name)
		}
	}
}

// reportsOf is f in every format: the brief and full summaries, Markdown,
// HTML, CSV and JSON.
func reportsOf(t *testing.T, f *results.File) map[string]string {
	t.Helper()
	var md, html, csv, js bytes.Buffer
	if err := Markdown(&md, []*results.File{f}, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := HTML(&html, []*results.File{f}, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := CSV(&csv, []*results.File{f}); err != nil {
		t.Fatal(err)
	}
	if err := JSON(&js, []*results.File{f}, Options{}); err != nil {
		t.Fatal(err)
	}
	return map[string]string{"summary": summaryText(t, f, SummaryOptions{Brief: true}), "full summary": summaryText(t, f, SummaryOptions{}),
		"markdown": md.String(), "html": html.String(), "csv": csv.String(), "json": js.String()}
}
