package relaymetrics

import (
	"strings"
	"testing"
	"time"

	"github.com/relaybench/relaybench/results"
)

// TestKnownDoubleCountIsNamedAsTheRelays: nostr-rs-relay 0.8.9 … 0.8.13
// counts every EVENT message twice in nostr_cmd_event_total (and an AUTH
// once). A count that is exactly that still disagrees with relaybench's
// bounds (the relay's figure is wrong), and its note names the relay's
// code; any other count outside the bounds, or another series twice over,
// is a plain disagreement.
func TestKnownDoubleCountIsNamedAsTheRelays(t *testing.T) {
	const finding = "a relay finding, not an error of the run: nostr-rs-relay 0.8.9 … 0.8.13 counts every EVENT message twice, once on arrival before parsing (src/server.rs:1266 in 0.8.12)"
	for _, tc := range []struct {
		name              string
		metrics           map[string]float64
		sent, accepted    int64
		disagree, finding bool
		want              string
	}{
		{"twice", map[string]float64{"nostr_cmd_event_total": 600}, 300, 300, true, true,
			"the relay counted 600 EVENT messages received (nostr_cmd_event_total), 2 times relaybench's 300 … 300 (accepted (OK true) … sent); "},
		{"twice plus AUTH", map[string]float64{"nostr_cmd_event_total": 610, "nostr_cmd_auth_total": 10}, 300, 300, true, true,
			"2 times relaybench's 300 … 300 (accepted (OK true) … sent) plus the relay's 10 (nostr_cmd_auth_total); "},
		{"twice some timed out", map[string]float64{"nostr_cmd_event_total": 590}, 300, 290, true, true, "2 times relaybench's 290 … 300"},
		{"within", map[string]float64{"nostr_cmd_event_total": 300}, 300, 300, false, false, "within relaybench's 300 … 300"},
		{"twice and one more", map[string]float64{"nostr_cmd_event_total": 601}, 300, 300, true, false,
			"(nostr_cmd_event_total), relaybench 300 … 300 (accepted (OK true) … sent); other clients"},
		{"AUTH not counted", map[string]float64{"nostr_cmd_event_total": 600, "nostr_cmd_auth_total": 10}, 300, 300, true, false, "other clients"},
		{"another series", map[string]float64{"wisp_events_stored_total": 600}, 300, 300, true, false, "2 times what relaybench sent"},
	} {
		ph := results.NewPhase("publish", "publish")
		ph.Accounts = []results.Account{{Op: results.OpEvent, Requested: tc.sent, Accepted: tc.accepted, TimedOut: tc.sent - tc.accepted}}
		ph.RelayMetrics = tc.metrics
		ph.RelayChecks = Checks(&ph)
		if len(ph.RelayChecks) != 1 || ph.RelayChecks[0].Disagree != tc.disagree {
			t.Errorf("%s: checks %+v, want disagree %v", tc.name, ph.RelayChecks, tc.disagree)
			continue
		}
		n := notes(&ph)
		if len(n) != 1 || !strings.Contains(n[0], tc.want) || strings.Contains(n[0], finding) != tc.finding {
			t.Errorf("%s: note %q\nwant %q, the relay's finding %v", tc.name, n, tc.want, tc.finding)
		}
	}
}

// TestKnownDoubleCountOfMergedSegments: merged segments whose windows
// overlap give the relay's count as a range; the finding is named when
// twice relaybench's bounds fall in it.
func TestKnownDoubleCountOfMergedSegments(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 4, 0, 0, 0, time.UTC)
	seg := func(start time.Time, events float64) *results.Phase {
		ph := segment(start, 10, 50, 50, 50, 1)
		ph.RelayMetrics["nostr_cmd_event_total"] = events
		return ph
	}
	// Each window read 150 of the 200 the relay counted for 100 EVENTs.
	out := merged(seg(t0, 150), seg(t0.Add(time.Second), 150))
	note := strings.Join(out.Notes, "\n")
	if !strings.Contains(note, "the relay counted 150 … 300 (merged segments whose windows overlap) EVENT messages received (nostr_cmd_event_total), 2 times relaybench's 100 … 100") ||
		!strings.Contains(note, "src/server.rs:1266") {
		t.Errorf("notes %q", out.Notes)
	}
	// 120 … 150 is neither 100 nor 200.
	out = merged(seg(t0, 120), seg(t0.Add(time.Second), 30))
	if note := strings.Join(out.Notes, "\n"); strings.Contains(note, "src/server.rs") || !strings.Contains(note, "relay metrics disagree: the relay counted 120 … 150") {
		t.Errorf("notes %q", out.Notes)
	}
}

// TestACountOfNoneIsChecked: a counter that did not move over the window
// is left out of the relay's metrics, unless a check compares it: a relay
// that counted none of the EVENTs relaybench sent disagrees, and Wisp
// storing none of the events it answered OK true (all duplicates) is
// within relaybench's bounds (it cannot tell duplicates apart).
func TestACountOfNoneIsChecked(t *testing.T) {
	page := Scrape{Values: map[string]float64{"nostr_cmd_event_total": 7, "wisp_events_stored_total": 5, "other_total": 3}, Types: map[string]string{}}
	d, _ := deltas(page, page)
	if v, ok := d["nostr_cmd_event_total"]; !ok || v != 0 || len(d) != 2 {
		t.Fatalf("deltas %v: want the checked series at 0, other_total left out", d)
	}
	ph := results.NewPhase("publish", "publish")
	ph.Accounts = []results.Account{{Op: results.OpEvent, Requested: 300, Accepted: 298, Refused: 2}}
	ph.RelayMetrics = d
	cs := Checks(&ph)
	if len(cs) != 2 || cs[0].Series != "nostr_cmd_event_total" || !cs[0].Disagree || cs[1].Series != "wisp_events_stored_total" || cs[1].Disagree || cs[1].Low != 0 {
		t.Errorf("checks %+v", cs)
	}
}
