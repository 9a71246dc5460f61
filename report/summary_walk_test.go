package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/relaybench/relaybench/results"
)

// A live run that ended before signing (an unreachable relay) has no
// corpus line, no nested brackets around an unknown software, and no "-v
// shows every counter" hint: it has no phase to show more of.
func TestSummaryBriefUnreachable(t *testing.T) {
	f := baseFile("mixed")
	f.Runs = []results.Run{{Relay: results.Relay{URL: "ws://127.0.0.1:1"}}} // the error is the verdict's
	f.Verdict = &results.Verdict{Status: 1, Outcome: "error", Reasons: []string{"dial ws://127.0.0.1:1: unreachable"}}
	s := summaryText(t, f, SummaryOptions{Brief: true})
	for _, not := range []string{"Corpus:", "0 events", "(no NIP-11))", "-v shows"} {
		if strings.Contains(s, not) {
			t.Errorf("brief shows %q:\n%s", not, s)
		}
	}
	if !strings.Contains(s, "  Relay:    ws://127.0.0.1:1 (software unknown: no NIP-11 document)\n\nVerdict: ERROR (exit 1)\n") {
		t.Errorf("relay line:\n%s", s)
	}
}

// The brief summary names each counter and rate by the one label table
// (briefLabels): no raw key words, no internal counters, and no counter
// that only restates another shown line; the full summary keeps them all.
func TestSummaryBriefLabels(t *testing.T) {
	ph := func(name, wl string, c map[string]int64, r map[string]float64, params map[string]any) results.Phase {
		return results.Phase{Name: name, Workload: wl, Duration: 1e9, Counts: c, Rates: r, Params: params}
	}
	for _, c := range []struct {
		p         results.Phase
		want, not []string
	}{
		{ph("subscribe", "subscribe", map[string]int64{"accepted": 200, "deliveries": 288, "expected": 288, "subscriber_frames": 292, "subscriber_reads": 256},
			map[string]float64{"deliveries_per_sec": 5946.88, "events_per_sec": 4129.77, "fanout": 1.44}, nil),
			[]string{"Delivery rate: 5,946.88 deliveries/second", "Publish rate: 4,129.77 events/second", "Deliveries per event: 1.44"},
			[]string{"Subscriber", "Expected", "Fanout", "Deliveries Rate", "Events Rate"}},
		{ph("negentropy/initial", "negentropy", map[string]int64{"have_ids": 150, "need_ids": 300, "round_trips": 5, "round_trips_max": 1, "round_trips_min": 1},
			map[string]float64{"syncs_per_sec": 472.97}, nil),
			[]string{"Negentropy sync, initial overlap:", "Ids only the client had (sum of syncs): 150", "Ids only the relay had (sum of syncs): 300", "Round trips: 5", "Sync rate: 472.97 syncs/second"},
			[]string{"Negentropy/initial Performance", "Have ids", "Need ids", "Round trips max", "Round trips min"}},
		{ph("count", "count", map[string]int64{"counts": 10, "count_exact": 10, "req_events_returned": 264, "req_queries": 10},
			map[string]float64{"count_vs_req_p50": 0.63}, nil),
			[]string{"COUNT p50 vs REQ p50: 0.63×"}, []string{"Count exact", "REQ events returned", "REQ queries", "Count vs REQ p50"}},
		{ph("search", "search", map[string]int64{"events_returned": 104, "results_word": 104, "results_substring": 3}, nil, nil),
			[]string{"Results holding the term inside a word: 3"}, []string{"Results word", "Results substring", "as a word"}},
		{ph("lifecycle", "lifecycle", map[string]int64{"accepted": 20, "delivered_before_ok": 4, "sampled": 20, "found": 20}, nil, nil),
			[]string{"Readable by id: 20"}, []string{"Delivered before OK", "Sampled", "Found"}},
		{ph("burst", "burst", map[string]int64{"accepted": 400}, map[string]float64{"between_success_rate": 1}, nil),
			[]string{"Success between bursts: 100.00%"}, []string{"Between success rate"}},
		{ph("query", "query", map[string]int64{"queries": 10, "events_returned": 327}, map[string]float64{"events_returned_per_sec": 42984.62}, nil),
			[]string{"Event return rate: 42,984.62 events/second"}, []string{"Events returned Rate", "events returned/second"}},
		{ph("load", "load", map[string]int64{"accepted": 80, "queries": 20, "intended": 100, "planned": 100, "ops_accepted": 100, "ops_sent": 100, "sent": 80},
			map[string]float64{"accepted_per_sec": 80, "intended_per_sec": 100, "ops_accepted_per_sec": 100}, map[string]any{"kind": "mixed"}),
			[]string{"Events accepted: 80", "Operations accepted: 100", "Accepted rate: 80.00 events/second", "Intended rate: 100.00 operations/second"},
			[]string{"Intended:", "Planned", "Ops accepted", "Ops sent", "Operations sent", "Sent:"}},
	} {
		s := summaryText(t, oneRun(c.p.Workload, nil, c.p), SummaryOptions{Brief: true})
		for _, w := range c.want {
			if !strings.Contains(s, w) {
				t.Errorf("%s: brief lacks %q:\n%s", c.p.Name, w, s)
			}
		}
		for _, n := range c.not {
			if strings.Contains(s, n) {
				t.Errorf("%s: brief shows %q:\n%s", c.p.Name, n, s)
			}
		}
	}
	// A group table's column of such a figure is -v's too.
	cp := ph("count", "count", map[string]int64{"counts": 2}, nil, nil)
	cp.Groups = []results.Group{{Name: "kind", Counts: map[string]int64{"counts": 2, "req_events_returned": 7}}}
	if s := summaryText(t, oneRun("count", nil, cp), SummaryOptions{Brief: true}); strings.Contains(strings.ToLower(s), "req events returned") {
		t.Errorf("brief group table keeps the REQ side:\n%s", s)
	}
	full := summaryText(t, oneRun("count", nil, ph("count", "count", map[string]int64{"req_queries": 10}, nil, nil)), SummaryOptions{})
	if !strings.Contains(full, "REQ queries: 10") {
		t.Errorf("full summary lacks a counter the brief leaves out:\n%s", full)
	}
}

// A sweep's points are named by payload size in the Verification and
// Resources tables ("sweep 1 KiB"), as in its own table, not "sweep/1024".
func TestSweepPhaseCells(t *testing.T) {
	ps := sweepPhases(1, 900)[:2]
	for i := range ps {
		ps[i].Verification = &results.Verification{Verified: true, Checked: 1, Expected: 10, Returned: 10, Passed: true}
		ps[i].Resources = &results.Resources{RelayCPUSecs: 0.2, ClientCPUSecs: 0.1}
	}
	var b bytes.Buffer
	if err := Markdown(&b, []*results.File{oneRun("sweep", nil, ps...)}, Options{}); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	if strings.Contains(s, "sweep/") || strings.Count(s, "| sweep 1 KiB |") != 2 || strings.Count(s, "| sweep 256 B |") != 2 {
		t.Errorf("sweep phases in the tables:\n%s", s)
	}
}
