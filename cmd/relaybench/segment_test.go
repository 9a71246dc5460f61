package main

import (
	"strings"
	"testing"
	"time"

	"github.com/relaybench/relaybench/corpus"
)

// Bad --segment, --start-at and --query-at values are usage errors (exit
// 2, one line naming the flag), said before anything is set up.
func TestSegmentFlagsAreChecked(t *testing.T) {
	out := t.TempDir()
	relay := []string{"--relay", "ws://127.0.0.1:9", "--anchor", "2026-01-01T00:00:00Z", "--out", out}
	cases := []usageCase{
		{append([]string{"run", "--segment", "3/3"}, relay...), []string{"--segment 3/3", "between 0 and N-1"}},
		{append([]string{"run", "--segment", "1:2"}, relay...), []string{"--segment 1:2"}},
		{[]string{"run", "--segment", "0/3", "--anchor", "2026-01-01T00:00:00Z", "--out", out}, []string{"--segment 0/3", "--relay"}},
		{[]string{"run", "--segment", "0/3", "--relay", "ws://127.0.0.1:9", "--out", out}, []string{"--segment 0/3", "--anchor"}},
		{append([]string{"run", "--segment", "0/2", "--workloads", "subscribe"}, relay...), []string{"subscribe", "does not split"}},
		{append([]string{"run", "--start-at", "2020-01-01T00:00:00Z"}, relay...), []string{"--start-at 2020-01-01T00:00:00Z", "in the past"}},
		{append([]string{"run", "--start-at", "soon"}, relay...), []string{"--start-at soon", "RFC 3339"}},
		{append([]string{"run", "--start-at", "+1h", "--query-at", "+0s"}, relay...), []string{"--query-at +0s", "after --start-at"}},
		{[]string{"compare", "--relays", "ws://127.0.0.1:9", "--segment", "0/2", "--out", out}, []string{"--segment"}},
		{[]string{"load", "--segment", "0/2", "--out", out}, []string{"--segment 0/2", "--relay"}},
		{[]string{"load", "--segment", "0/2", "--relay", "ws://127.0.0.1:9", "--load-kind", "query", "--out", out}, []string{"--segment 0/2", "publish"}},
		{[]string{"load", "--query-at", "+1s", "--relay", "ws://127.0.0.1:9", "--out", out}, []string{"--query-at +1s", "no query phase"}},
	}
	wantUsage(t, cases)
}

func TestParseStartAt(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	from := now.Add(time.Minute)
	for v, want := range map[string]time.Time{
		"":                          {},
		"+30s":                      from.Add(30 * time.Second),
		"+0s":                       from,
		"2026-05-01T12:05:00Z":      now.Add(5 * time.Minute),
		"2026-05-01T14:05:00+02:00": now.Add(5 * time.Minute),
		"2026-05-01T11:59:59Z":      now.Add(-time.Second), // within the tolerance
	} {
		got, err := parseStartAt("start-at", v, from, now)
		if err != nil || !got.Equal(want) {
			t.Errorf("parseStartAt(%q) = %v, %v; want %v", v, got, err, want)
		}
	}
	for _, v := range []string{"+-5s", "+x", "2026-05-01T11:59:00Z", "12:00"} {
		if _, err := parseStartAt("start-at", v, from, now); err == nil {
			t.Errorf("parseStartAt(%q) accepted", v)
		}
	}
}

// TestSegmentBasePhasesInWorkloads: publish and query, the phases that
// split, may be named in --workloads beside a --segment (as run always
// runs them); the refusal of a workload that does not split names it and
// not them.
func TestSegmentBasePhasesInWorkloads(t *testing.T) {
	f := segmentFlags{Segment: "0/2"}
	seg, err := corpus.ParseSegment(f.Segment)
	if err != nil {
		t.Fatal(err)
	}
	f.seg = seg
	tf := targetFlags{Relay: "ws://127.0.0.1:9"}
	c := corpusFlags{Anchor: "2026-01-01T00:00:00Z"}
	if err := f.segmented(tf, c, []string{"publish", " query", "load"}); err != nil {
		t.Errorf("publish,query,load with --segment: %v", err)
	}
	if err := f.segmented(tf, c, []string{"publish", "subscribe"}); err == nil || !strings.Contains(err.Error(), "workload subscribe does not split") {
		t.Errorf("subscribe with --segment: %v, want it refused by name", err)
	}
}
