package main

import "testing"

// subscribe --segment needs --relay, --rate and --start-at, each said in
// one line before anything is set up (exit 2).
func TestSubscribeSegmentFlagsAreChecked(t *testing.T) {
	out := t.TempDir()
	cases := []usageCase{
		{[]string{"subscribe", "--segment", "0/2", "--relay", "ws://127.0.0.1:9", "--start-at", "+1h", "--out", out}, []string{"--segment 0/2", "--rate", "intended send time"}},
		{[]string{"subscribe", "--segment", "0/2", "--relay", "ws://127.0.0.1:9", "--rate", "100", "--out", out}, []string{"--segment 0/2", "--start-at"}},
		{[]string{"subscribe", "--segment", "0/2", "--rate", "100", "--start-at", "+1h", "--out", out}, []string{"--segment 0/2", "--relay"}},
		{[]string{"subscribe", "--segment", "2/2", "--relay", "ws://127.0.0.1:9", "--out", out}, []string{"--segment 2/2"}},
		{[]string{"subscribe", "--start-at", "2020-01-01T00:00:00Z", "--relay", "ws://127.0.0.1:9", "--out", out}, []string{"--start-at", "in the past"}},
	}
	wantUsage(t, cases)
}
