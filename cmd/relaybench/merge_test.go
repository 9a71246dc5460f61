package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/relaybench/relaybench/metrics"
	"github.com/relaybench/relaybench/results"
)

// segmentFile writes segment i of n: a publish phase of vals, no queries.
func segmentFile(t *testing.T, dir string, i, n int, vals []int64) string {
	t.Helper()
	h := metrics.NewHistogram()
	for _, v := range vals {
		h.Record(v)
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f := &results.File{Tool: results.Tool{Name: "relaybench", Version: "dev"}, Command: "run",
		Args: []string{"run", "--segment", string(rune('0'+i)) + "/" + string(rune('0'+n))}, StartedAt: start, FinishedAt: start.Add(time.Second),
		Runs: []results.Run{{Relay: results.Relay{URL: "ws://127.0.0.1:1"}, Corpus: results.Corpus{Key: "k", Events: 10},
			Segment: &results.Segment{Index: i, Count: n},
			Phases: []results.Phase{{Name: "publish", Workload: "publish", Start: start, Duration: int64(time.Second),
				Counts:   map[string]int64{"accepted": int64(len(vals))},
				Latency:  map[string]*results.Histogram{"ok": h.Result()},
				Accounts: []results.Account{{Op: results.OpEvent, Requested: int64(len(vals)), Accepted: int64(len(vals))}}}}}}}
	p := filepath.Join(dir, "seg"+string(rune('0'+i))+".json")
	if err := results.Write(p, f); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestMergeCommand(t *testing.T) {
	dir := t.TempDir()
	a, b := segmentFile(t, dir, 0, 2, []int64{1000, 2000}), segmentFile(t, dir, 1, 2, []int64{3000})
	out := filepath.Join(dir, "merged.json")
	if code := run([]string{"merge", "--quiet", "-o", out, b, a}); code != 0 {
		t.Fatalf("merge: exit %d", code)
	}
	m, err := results.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	ph := m.Runs[0].Phases[0]
	if m.Merged == nil || m.Merged.Segments != 2 || ph.Counts["accepted"] != 3 || ph.Latency["ok"].Count != 3 || m.Verdict == nil || m.Verdict.Status != 0 {
		t.Fatalf("merged %+v phase %+v verdict %+v", m.Merged, ph, m.Verdict)
	}
	// The merged file's command is segment 0's (its Command line in every
	// report); the merge's own, as typed, is its Merged line's.
	if got, want := strings.Join(m.Merged.Command, " "), "merge --quiet -o "+out+" "+b+" "+a; got != want {
		t.Fatalf("merge's command %q, want %q", got, want)
	}
	if got := strings.Join(m.Args, " "); !strings.Contains(got, "--segment 0/2") || strings.HasPrefix(got, "merge") {
		t.Fatalf("args %q, want the segments' command", got)
	}
	// The merged file renders like any other.
	if code := run([]string{"report", out, "-o", filepath.Join(dir, "m.html")}); code != 0 {
		t.Fatalf("report of the merged file: exit %d", code)
	}
	if code := run([]string{"report", "--merge", a, b, "-o", filepath.Join(dir, "m.md")}); code != 0 {
		t.Fatalf("report --merge: exit %d", code)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "m.md"))
	if !strings.Contains(string(md), "from 2 segments (relaybench report --merge "+a+" "+b) || !strings.Contains(string(md), "--segment 0/2") {
		t.Fatalf("report --merge does not say it merged, or how the test ran:\n%s", md)
	}
	// Thresholds judge the merged figures.
	if code := run([]string{"merge", "--quiet", "-o", filepath.Join(dir, "t.json"), "--threshold", "publish.ok.count>3", a, b}); code != 5 {
		t.Fatalf("a threshold the merge misses: exit %d, want 5", code)
	}
	// Not the segments of one test: a usage error.
	if code := run([]string{"merge", "--quiet", "-o", filepath.Join(dir, "x.json"), a}); code != 2 {
		t.Fatalf("one segment of two: exit %d, want 2", code)
	}
	if code := run([]string{"merge", "--quiet", "-o", filepath.Join(dir, "y.json"), a, a}); code != 2 {
		t.Fatalf("a segment twice: exit %d, want 2", code)
	}
	// -o onto an existing file: refused before the merge, the file intact.
	before, _ := os.ReadFile(out)
	code, stdout, stderr := runHere(t, "merge", "-o", out, a, b)
	if after, _ := os.ReadFile(out); code != 2 || stdout != "" || strings.Contains(stderr, "Verdict") || !strings.Contains(stderr, "exists") || !bytes.Equal(before, after) {
		t.Fatalf("merge -o onto an existing file: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}
