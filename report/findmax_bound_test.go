package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/relaybench/relaybench/results"
)

// A find-max search that stopped at a step the busy machine limited has a
// lower bound for its answer: the headline says so ("Max rate: ≥ 4,000
// events/second (a lower bound: …)") as its step line and warning do, in
// the terminal summaries, the Markdown and HTML tables and the JSON report;
// a search the relay stopped keeps its plain figure.
func TestFindMaxLowerBoundHeadline(t *testing.T) {
	busy := results.Phase{Name: "find-max", Workload: "find-max", Duration: 2e9, ClientLimited: true,
		Counts: map[string]int64{"steps": 2}, Rates: map[string]float64{"max_rate": 4000},
		Groups: []results.Group{
			{Name: "2000/s", Counts: map[string]int64{"pass": 1}, Rates: map[string]float64{"offered_per_sec": 2000}},
			{Name: "4000/s", Counts: map[string]int64{"pass": 0, "client_limited": 1, "machine_busy": 1}, Rates: map[string]float64{"offered_per_sec": 4000}}}}
	const why = "a lower bound: the search stopped at a step the busy machine limited"
	for _, o := range []SummaryOptions{{}, {Brief: true}} {
		s := summaryText(t, oneRun("find-max", nil, busy), o)
		if !strings.Contains(s, "Max rate: ≥ 4,000 events/second ("+why+")\n") {
			t.Errorf("brief %v: the headline is not a lower bound:\n%s", o.Brief, s)
		}
	}
	page, md := render(t, oneRun("find-max", nil, busy))
	for name, s := range map[string]string{"HTML": page, "Markdown": md} {
		if !strings.Contains(s, "≥ 4,000") {
			t.Errorf("%s: the max rate is not marked a lower bound:\n%s", name, s)
		}
	}
	var buf bytes.Buffer
	if err := JSON(&buf, []*results.File{oneRun("find-max", nil, busy)}, Options{}); err != nil {
		t.Fatal(err)
	}
	var j struct {
		Files []struct {
			Runs []struct {
				Phases []struct {
					MaxRateBound string `json:"max_rate_bound"`
				} `json:"phases"`
			} `json:"runs"`
		} `json:"files"`
	}
	if err := json.Unmarshal(buf.Bytes(), &j); err != nil || len(j.Files) != 1 || len(j.Files[0].Runs) != 1 || j.Files[0].Runs[0].Phases[0].MaxRateBound != why {
		t.Errorf("JSON report (%v): %s", err, buf.String())
	}

	relay := busy
	relay.ClientLimited = false
	relay.Groups = []results.Group{busy.Groups[0], {Name: "8000/s", Counts: map[string]int64{"pass": 0}}}
	relay.Rates = map[string]float64{"max_rate": 4000, "first_failing_rate": 8000}
	s := summaryText(t, oneRun("find-max", nil, relay), SummaryOptions{Brief: true})
	if !strings.Contains(s, "Max rate: 4,000 events/second\n") || strings.Contains(s, "≥") {
		t.Errorf("a search the relay stopped reads:\n%s", s)
	}

	// Every step passed and --max-steps (or --max-rate) ended the search:
	// no step failed, so the rate is a lower bound too.
	limited := relay
	limited.Groups = []results.Group{busy.Groups[0], {Name: "4000/s", Counts: map[string]int64{"pass": 1}}}
	limited.Rates = map[string]float64{"max_rate": 4000}
	s = summaryText(t, oneRun("find-max", nil, limited), SummaryOptions{Brief: true})
	if !strings.Contains(s, "Max rate: ≥ 4,000 events/second (a lower bound: no step failed") {
		t.Errorf("a search its own limits ended reads:\n%s", s)
	}
}
