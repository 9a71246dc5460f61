package relaymetrics

import (
	"strings"
	"testing"
	"time"

	"github.com/relaybench/relaybench/results"
)

// segment is a segment's publish phase: its window and the relay's
// counts over it.
func segment(start time.Time, secs int, sent, accepted int64, written float64, conns float64) *results.Phase {
	ph := results.NewPhase("publish", "publish")
	ph.Start, ph.Duration = start, int64(time.Duration(secs)*time.Second)
	ph.Accounts = []results.Account{{Op: results.OpEvent, Requested: sent, Accepted: accepted, TimedOut: sent - accepted}}
	ph.RelayMetrics = map[string]float64{"nostr_events_write_seconds_count": written, "nostr_db_connections": conns}
	return &ph
}

// merged is what merge does for a phase: accounts summed, one per-segment
// part per segment; then Merge.
func merged(phs ...*results.Phase) results.Phase {
	out := results.NewPhase("publish", "publish")
	var acc results.Account
	for i, p := range phs {
		acc.Op = results.OpEvent
		acc.Requested += p.Accounts[0].Requested
		acc.Accepted += p.Accounts[0].Accepted
		acc.TimedOut += p.Accounts[0].TimedOut
		out.PerSegment = append(out.PerSegment, results.SegmentPart{Segment: i, Start: p.Start, Duration: p.Duration})
	}
	out.Accounts = []results.Account{acc}
	Merge(&out, phs)
	return out
}

// TestMergeOverlappingSegments: two segments at once against one relay
// each read the other's events too (100 written over each window, 50 of
// them each's): over the merged window the relay wrote 100 to 200, which
// holds relaybench's 100 accepted: no disagreement. Each segment keeps its
// own reading; the gauge is the last window's.
func TestMergeOverlappingSegments(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 4, 0, 0, 0, time.UTC)
	out := merged(segment(t0, 10, 50, 50, 100, 3), segment(t0.Add(time.Second), 10, 50, 50, 100, 4))
	if out.RelayMetrics["nostr_events_write_seconds_count"] != 100 || out.RelayMetrics["nostr_db_connections"] != 4 {
		t.Errorf("merged %v", out.RelayMetrics)
	}
	if len(out.RelayChecks) != 1 {
		t.Fatalf("checks %+v", out.RelayChecks)
	}
	c := out.RelayChecks[0]
	if c.Relay != 100 || c.RelayMax != 200 || c.Low != 100 || c.High != 100 || c.Disagree {
		t.Errorf("check %+v", c)
	}
	for i, p := range out.PerSegment {
		if p.RelayMetrics["nostr_events_write_seconds_count"] != 100 {
			t.Errorf("segment %d keeps %v", i, p.RelayMetrics)
		}
	}
	if !strings.Contains(strings.Join(out.Notes, "\n"), "windows overlap") {
		t.Errorf("notes %q", out.Notes)
	}
	// The relay wrote 300 to 500 over the window: more than relaybench sent.
	out = merged(segment(t0, 10, 50, 50, 300, 3), segment(t0.Add(time.Second), 10, 50, 50, 200, 4))
	if c := out.RelayChecks[0]; !c.Disagree || c.Relay != 300 || c.RelayMax != 500 {
		t.Errorf("check %+v", c)
	}
	if !strings.Contains(strings.Join(out.Notes, "\n"), "relay metrics disagree: the relay counted 300 … 500") {
		t.Errorf("notes %q", out.Notes)
	}
}

// TestMergeSegmentsOneAfterAnother: disjoint windows read disjoint
// counts: they add up exactly, and a sum below what relaybench saw
// accepted disagrees.
func TestMergeSegmentsOneAfterAnother(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 4, 0, 0, 0, time.UTC)
	out := merged(segment(t0, 10, 50, 50, 50, 3), segment(t0.Add(20*time.Second), 10, 50, 40, 40, 1))
	c := out.RelayChecks[0]
	if out.RelayMetrics["nostr_events_write_seconds_count"] != 90 || c.RelayMax != 0 || c.Disagree || out.RelayMetrics["nostr_db_connections"] != 1 {
		t.Errorf("merged %v, check %+v", out.RelayMetrics, c)
	}
	out = merged(segment(t0, 10, 50, 50, 30, 3), segment(t0.Add(20*time.Second), 10, 50, 40, 40, 1))
	if c := out.RelayChecks[0]; !c.Disagree || c.Relay != 70 {
		t.Errorf("check %+v", c)
	}
	if out := merged(segment(t0, 10, 5, 5, 5, 1)); len(out.Notes) == 0 {
		t.Errorf("one segment: no note")
	}
	none := segment(t0, 10, 5, 5, 5, 1)
	none.RelayMetrics = nil
	if out := merged(none); out.RelayMetrics != nil || out.RelayChecks != nil {
		t.Errorf("segments without relay metrics got %v", out.RelayMetrics)
	}
}
