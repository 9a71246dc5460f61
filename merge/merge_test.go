package merge

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/relaybench/relaybench/metrics"
	"github.com/relaybench/relaybench/results"
)

var t0 = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)

// segFile is a synthetic results file of segment i of n: a publish phase
// whose ok latencies are vals, starting at start.
func segFile(i, n int, start time.Time, vals []int64) *results.File {
	h := metrics.NewHistogram()
	for _, v := range vals {
		h.Record(v)
	}
	acc := int64(len(vals))
	ph := results.Phase{
		Name: "publish", Workload: "publish", Start: start, Duration: int64(2 * time.Second),
		Params:  map[string]any{"events": 300, "segment_share": map[string]any{"events": len(vals)}},
		Counts:  map[string]int64{"sent": acc + 1, "accepted": acc, "refused": 1, "bytes_sent": 1000 * (acc + 1)},
		Refused: map[string]int64{"rate-limited": 1},
		Rates:   map[string]float64{"events_per_sec": float64(acc) / 2, "sent_per_sec": float64(acc+1) / 2, "mb_per_sec": float64(1000*(acc+1)) / 2 / 1e6},
		Latency: map[string]*results.Histogram{"ok": h.Result()},
		Accounts: []results.Account{{Op: results.OpEvent, Requested: acc + 1, Accepted: acc, Refused: 1,
			RefusedBy: map[string]int64{"rate-limited": 1}}},
		Series: []results.Second{
			{T: 0, Counts: map[string]int64{"accepted": acc / 2}, LatMaxNs: 10},
			{T: 1, Counts: map[string]int64{"accepted": acc - acc/2}, LatMaxNs: 20 + int64(i)},
		},
		Resources: &results.Resources{ClientCPUSecs: 0.5},
		Notes:     []string{"closed loop", "segment-specific " + string(rune('a'+i))},
	}
	return &results.File{
		Schema: results.SchemaVersion, Tool: results.Tool{Name: "relaybench", Version: "dev"},
		Machine: results.Machine{Hostname: "host" + string(rune('0'+i)), OS: "linux", Arch: "amd64", Cores: 2},
		Command: "run", StartedAt: start.Add(-time.Second), FinishedAt: start.Add(3 * time.Second),
		Runs: []results.Run{{
			Relay:   results.Relay{URL: "ws://127.0.0.1:7777"},
			Corpus:  results.Corpus{Seed: 1, Events: 300, Key: "k"},
			Params:  map[string]any{"events": 300, "segment": i},
			Segment: &results.Segment{Index: i, Count: n},
			Phases:  []results.Phase{ph},
		}},
	}
}

func TestMergeCountsAndHistogramsExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	union := metrics.NewHistogram()
	var in []Input
	for i := 0; i < 3; i++ {
		vals := make([]int64, 100+50*i)
		for k := range vals {
			// Segments with different distributions: averaging their
			// percentiles would be wrong.
			vals[k] = int64(rng.ExpFloat64()*float64(1+i*i)*1e6) + 1000
			union.Record(vals[k])
		}
		// Given out of order: the merge orders by segment.
		in = append([]Input{{Name: "seg" + string(rune('0'+i)) + ".json", File: segFile(i, 3, t0.Add(time.Duration(i)*time.Millisecond), vals)}}, in...)
	}
	out, err := Merge(context.Background(), in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if out.Merged == nil || out.Merged.Segments != 3 || len(out.Merged.Sources) != 3 || out.Merged.Sources[0].File != "seg0.json" {
		t.Fatalf("merged info %+v", out.Merged)
	}
	ph := out.Runs[0].Phases[0]
	if ph.Counts["accepted"] != 450 || ph.Counts["sent"] != 453 || ph.Refused["rate-limited"] != 3 {
		t.Fatalf("counts %v refused %v", ph.Counts, ph.Refused)
	}
	a := ph.Account(results.OpEvent)
	if a == nil || a.Requested != 453 || a.Accepted != 450 || a.RefusedBy["rate-limited"] != 3 || !a.Balanced() {
		t.Fatalf("account %+v", a)
	}
	ok := ph.Latency["ok"]
	want := union.Result()
	if ok.Count != want.Count || ok.Min != want.Min || ok.Max != want.Max {
		t.Fatalf("histogram count/min/max %d/%d/%d, union %d/%d/%d", ok.Count, ok.Min, ok.Max, want.Count, want.Min, want.Max)
	}
	for _, q := range []string{"50", "90", "99", "99.9", "99.99"} {
		if ok.Percentiles[q] != want.Percentiles[q] {
			t.Fatalf("p%s %d, union of recorded values %d", q, ok.Percentiles[q], want.Percentiles[q])
		}
	}
	// The window is the union: 0 ms … 2 s + 2 ms.
	if !ph.Start.Equal(t0) || ph.Duration != int64(2*time.Second+2*time.Millisecond) {
		t.Fatalf("window %v + %v", ph.Start, time.Duration(ph.Duration))
	}
	if r := ph.Rates["events_per_sec"]; math.Abs(r-450/2.002) > 1e-9 {
		t.Fatalf("events_per_sec %v, want %v", r, 450/2.002)
	}
	if len(ph.PerSegment) != 3 || ph.PerSegment[2].Host != "host2" || ph.PerSegment[1].Resources.ClientCPUSecs != 0.5 {
		t.Fatalf("per segment %+v", ph.PerSegment)
	}
	if ph.Resources.ClientCPUSecs != 1.5 {
		t.Fatalf("client cpu %v", ph.Resources.ClientCPUSecs)
	}
	if _, ok := ph.Params["segment_share"]; ok {
		t.Fatal("segment_share kept in the merged params")
	}
	notes := strings.Join(ph.Notes, "\n")
	if strings.Count(notes, "closed loop") != 1 || !strings.Contains(notes, "each of the 3 segments: closed loop") || !strings.Contains(notes, "segment 2: segment-specific c") {
		t.Fatalf("notes %q", ph.Notes)
	}
	if len(ph.Series) != 2 || ph.Series[0].Counts["accepted"] != 50+75+100 || ph.Series[1].LatMaxNs != 22 {
		t.Fatalf("series %+v", ph.Series)
	}
}

func TestSeriesAlignOnWallClock(t *testing.T) {
	a := segFile(0, 2, t0, []int64{1, 2, 3, 4})
	b := segFile(1, 2, t0.Add(time.Second+3*time.Millisecond), []int64{5, 6})
	out, err := Merge(context.Background(), []Input{{"a", a}, {"b", b}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := out.Runs[0].Phases[0].Series
	// a: T0 → 2, T1 → 2; b starts 1 s later: T0 → 1 (merged T1), T1 → 1 (merged T2).
	if len(s) != 3 || s[0].T != 0 || s[1].T != 1 || s[2].T != 2 {
		t.Fatalf("series %+v", s)
	}
	if s[0].Counts["accepted"] != 2 || s[1].Counts["accepted"] != 3 || s[2].Counts["accepted"] != 1 {
		t.Fatalf("aligned counts %v %v %v", s[0].Counts, s[1].Counts, s[2].Counts)
	}
	// 100 ms points of a short phase align on their own width.
	a.Runs[0].Phases[0].Series = []results.Second{{T: 0, AtMs: 0, WidthMs: 100, Counts: map[string]int64{"x": 1}}, {T: 0, AtMs: 100, WidthMs: 100, Counts: map[string]int64{"x": 1}}}
	b.Runs[0].Phases[0].Start = t0.Add(102 * time.Millisecond)
	b.Runs[0].Phases[0].Series = []results.Second{{T: 0, AtMs: 0, WidthMs: 100, Counts: map[string]int64{"x": 5}}}
	out, err = Merge(context.Background(), []Input{{"a", a}, {"b", b}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s = out.Runs[0].Phases[0].Series
	if len(s) != 2 || s[1].AtMs != 100 || s[1].WidthMs != 100 || s[1].Counts["x"] != 6 {
		t.Fatalf("100 ms series %+v", s)
	}
}

func TestRefusesWithOneLine(t *testing.T) {
	mk := func(i, n int) *results.File { return segFile(i, n, t0, []int64{1, 2}) }
	cases := map[string]struct {
		in   []Input
		want string
	}{
		"not a segment": {[]Input{{"a", func() *results.File { f := mk(0, 2); f.Runs[0].Segment = nil; return f }()}, {"b", mk(1, 2)}}, "not a segment"},
		"missing":       {[]Input{{"a", mk(0, 3)}, {"b", mk(2, 3)}}, "segment 1 of 3 missing"},
		"twice":         {[]Input{{"a", mk(0, 2)}, {"b", mk(0, 2)}}, "both segment 0/2"},
		"different N":   {[]Input{{"a", mk(0, 2)}, {"b", mk(1, 3)}}, "others are of 2 segments"},
		"params": {[]Input{{"a", mk(0, 2)}, {"b", func() *results.File {
			f := mk(1, 2)
			f.Runs[0].Params["events"] = 5
			return f
		}()}}, `parameter "events"`},
		"command": {[]Input{{"a", mk(0, 2)}, {"b", func() *results.File { f := mk(1, 2); f.Command = "load"; return f }()}}, "not one test"},
		"corpus":  {[]Input{{"a", mk(0, 2)}, {"b", func() *results.File { f := mk(1, 2); f.Runs[0].Corpus.Key = "other"; return f }()}}, "different corpora"},
		"relay": {[]Input{{"a", mk(0, 2)}, {"b", func() *results.File {
			f := mk(1, 2)
			f.Runs[0].Relay.URL = "ws://127.0.0.1:1"
			return f
		}()}}, "one relay"},
		"managed":  {[]Input{{"a", func() *results.File { f := mk(0, 2); f.Runs[0].Relay.Managed = true; return f }()}, {"b", mk(1, 2)}}, "its own relay"},
		"query-at": {[]Input{{"a", func() *results.File { f := mk(0, 2); at := t0; f.Runs[0].Segment.QueryAt = &at; return f }()}, {"b", mk(1, 2)}}, "--query-at"},
		"start-at": {[]Input{{"a", func() *results.File { f := mk(0, 2); at := t0; f.Runs[0].Segment.StartAt = &at; return f }()}, {"b", mk(1, 2)}}, "--start-at"},
	}
	for name, c := range cases {
		_, err := Merge(context.Background(), c.in, Options{})
		var ue *UsageError
		if !errors.As(err, &ue) {
			t.Errorf("%s: error %v, want a usage error", name, err)
			continue
		}
		if !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %q, want one line with %q", name, err, c.want)
		}
	}
	// --force merges what differs in parameters.
	f := mk(1, 2)
	f.Runs[0].Params["events"] = 5
	if _, err := Merge(context.Background(), []Input{{"a", mk(0, 2)}, {"b", f}}, Options{Force: true}); err != nil {
		t.Fatalf("--force: %v", err)
	}
}

func TestStartSpreadFlagged(t *testing.T) {
	a, b := segFile(0, 2, t0, []int64{1}), segFile(1, 2, t0, []int64{2})
	at := t0
	a.Runs[0].Segment.StartAt, b.Runs[0].Segment.StartAt = &at, &at
	b.Runs[0].Segment.StartLateNs = int64(300 * time.Millisecond)
	out, err := Merge(context.Background(), []Input{{"a", a}, {"b", b}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if out.Merged.StartSpreadNs != int64(300*time.Millisecond) || !strings.Contains(strings.Join(out.Merged.Warnings, " "), "did not start together") {
		t.Fatalf("spread %d warnings %q", out.Merged.StartSpreadNs, out.Merged.Warnings)
	}
}

func TestRatesRecomputed(t *testing.T) {
	a, b := segFile(0, 2, t0, []int64{1, 2}), segFile(1, 2, t0.Add(time.Second), []int64{3})
	// Query shapes: a rate over the time the shape's queries took (0.5 s
	// and 1 s); subscribers: a rate over the phase's window (2 s each).
	a.Runs[0].Phases[0].Groups = []results.Group{
		{Name: "kind", Counts: map[string]int64{"queries": 10}, Rates: map[string]float64{"queries_per_sec": 20}},
		{Name: "sub", Counts: map[string]int64{"deliveries": 100}, Rates: map[string]float64{"deliveries_per_sec": 50}},
	}
	b.Runs[0].Phases[0].Groups = []results.Group{
		{Name: "kind", Counts: map[string]int64{"queries": 20}, Rates: map[string]float64{"queries_per_sec": 20}},
		{Name: "sub", Counts: map[string]int64{"deliveries": 300}, Rates: map[string]float64{"deliveries_per_sec": 150}},
	}
	a.Runs[0].Phases[0].Rates["fanout"] = 2
	b.Runs[0].Phases[0].Rates["fanout"] = 3
	out, err := Merge(context.Background(), []Input{{"a", a}, {"b", b}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ph := out.Runs[0].Phases[0]
	if r := ph.Groups[0].Rates["queries_per_sec"]; math.Abs(r-20) > 1e-9 {
		t.Fatalf("busy-time rate %v, want 30 queries / 1.5 s = 20", r)
	}
	if r := ph.Groups[1].Rates["deliveries_per_sec"]; math.Abs(r-400.0/3) > 1e-9 {
		t.Fatalf("window rate %v, want 400 deliveries / 3 s", r)
	}
	if _, ok := ph.Rates["fanout"]; ok || !strings.Contains(strings.Join(ph.Notes, " "), "rate fanout") {
		t.Fatalf("a ratio was kept: %v %q", ph.Rates, ph.Notes)
	}
}

// A ratio count (client memory per idle subscription) merges as the ratio
// of the sums, not as the sum of the segments' ratios.
func TestRatioCountsMerged(t *testing.T) {
	segs := []map[string]int64{
		{"client_rss_idle_bytes": 1000 * 20000, "client_bytes_per_subscription": 20000, "deliveries": 5},
		{"client_rss_idle_bytes": 3000 * 18000, "client_bytes_per_subscription": 18000, "deliveries": 7},
	}
	out := addCounts(len(segs), func(i int) map[string]int64 { return segs[i] })
	ratioCounts(out, len(segs), func(i int) map[string]int64 { return segs[i] })
	if got, want := out["client_bytes_per_subscription"], int64(18500); got != want { // 74 MB over 4,000 subscriptions
		t.Errorf("per subscription: %d, want %d", got, want)
	}
	if out["deliveries"] != 12 || out["client_rss_idle_bytes"] != 74000000 {
		t.Errorf("sums: %v", out)
	}
}
