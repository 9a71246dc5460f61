package main

import (
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/relaybench/relaybench/results"
)

func TestSplitSides(t *testing.T) {
	for _, tc := range []struct {
		args              []string
		files, base, cand []string
	}{
		{[]string{"report", "a.json", "b.json", "--format", "md"}, []string{"a.json", "b.json"}, nil, nil},
		{[]string{"report", "--base", "a1", "a2", "--cand", "b1", "b2", "--o", "x.md"}, nil, []string{"a1", "a2"}, []string{"b1", "b2"}},
		{[]string{"report", "--base=a1,a2", "--title", "T", "--cand", "b1"}, nil, []string{"a1", "a2"}, []string{"b1"}},
		{[]string{"report", "-o", "out.csv", "r.json", "--report-format", "csv"}, []string{"r.json"}, nil, nil},
	} {
		f, b, c := splitSides(tc.args)
		if !reflect.DeepEqual(f, tc.files) || !reflect.DeepEqual(b, tc.base) || !reflect.DeepEqual(c, tc.cand) {
			t.Errorf("%v: files %v base %v cand %v", tc.args, f, b, c)
		}
	}
}

func TestFormatFor(t *testing.T) {
	for _, tc := range []struct{ flag, out, want string }{
		{"", "", "summary"}, {"", "r.md", "md"}, {"", "r.HTML", "html"}, {"", "r.csv", "csv"}, {"", "r.json", "json"},
		{"markdown", "r.html", "md"}, {"json", "", "json"},
	} {
		if got, err := formatFor(tc.flag, tc.out); err != nil || got != tc.want {
			t.Errorf("formatFor(%q, %q) = %q, %v; want %q", tc.flag, tc.out, got, err, tc.want)
		}
	}
	if _, err := formatFor("pdf", ""); err == nil {
		t.Error("pdf accepted")
	}
}

func TestReportCommand(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "r.json")
	f := &results.File{Tool: results.Tool{Name: "relaybench", Version: "test"}, Machine: results.Machine{OS: "linux", Arch: "amd64", Cores: 2},
		Command: "run", StartedAt: time.Unix(0, 0), FinishedAt: time.Unix(10, 0),
		Runs: []results.Run{{Relay: results.Relay{URL: "ws://127.0.0.1:1"}, Phases: []results.Phase{{Name: "publish", Duration: 1e9,
			Counts: map[string]int64{"sent": 5, "accepted": 5}, Rates: map[string]float64{"events_per_sec": 5}}}}}}
	if err := results.Write(in, f); err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"md", "csv", "json", "html"} {
		out := filepath.Join(dir, "out."+format)
		if code := run([]string{"report", in, "-o", out}); code != 0 {
			t.Fatalf("%s: exit %d", format, code)
		}
		if b, err := os.ReadFile(out); err != nil || len(b) == 0 {
			t.Fatalf("%s: no output (%v)", format, err)
		}
	}
	charts := filepath.Join(dir, "charts")
	if code := run([]string{"report", in, "--report-format", "markdown", "--report-file", filepath.Join(dir, "x"), "--charts", charts}); code != 0 {
		t.Fatalf("reference-suite flags: exit %d", code)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "x"))
	if !strings.HasPrefix(string(b), "# ") {
		t.Error("--report-format markdown did not write Markdown")
	}
	if code := run([]string{"report", "--base", in, in, "--cand", in}); code != 0 {
		t.Fatalf("compare: exit %d", code)
	}
	bad := filepath.Join(dir, "bad.json")
	_ = os.WriteFile(bad, []byte(`{"schema":"other/v9"}`), 0o644)
	for _, args := range [][]string{
		{"report", filepath.Join(dir, "missing.json")},
		{"report", bad},
		{"report", in, "--format", "pdf"},
		{"report"},
		{"report", "--base", in},
	} {
		if code := run(args); code == 0 {
			t.Errorf("%v: exit 0, want an error", args)
		}
	}
}

// TestReportABFormats checks that report --base/--cand writes the format
// -o names: an HTML page for .html (it wrote the terminal text), Markdown
// for .md, and refuses .json before reading anything (exit 2).
func TestReportABFormats(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "r.json")
	f := &results.File{Tool: results.Tool{Name: "relaybench", Version: "test"}, Machine: results.Machine{OS: "linux", Arch: "amd64", Cores: 2},
		Command: "run", StartedAt: time.Unix(0, 0), FinishedAt: time.Unix(10, 0), Verdict: &results.Verdict{Status: 0, Outcome: "passed"},
		Runs: []results.Run{{Relay: results.Relay{Name: "r1", URL: "ws://127.0.0.1:1"}, Phases: []results.Phase{{Name: "publish", Duration: 1e9,
			Counts: map[string]int64{"sent": 5, "accepted": 5}, Rates: map[string]float64{"events_per_sec": 5}}}}}}
	if err := results.Write(in, f); err != nil {
		t.Fatal(err)
	}
	for ext, prefix := range map[string]string{"html": "<!DOCTYPE html>", "md": "# Baseline vs candidate", "txt": "=== Baseline vs Candidate ==="} {
		out := filepath.Join(dir, "ab."+ext)
		if code := run([]string{"report", "--base", in, "--cand", in, "-o", out}); code != 0 {
			t.Fatalf("-o ab.%s: exit %d", ext, code)
		}
		b, err := os.ReadFile(out)
		if err != nil || !strings.HasPrefix(string(b), prefix) || !strings.Contains(string(b), "Verdict: PASSED (exit 0)") {
			t.Errorf("-o ab.%s: want %q and the verdicts, got %.200q (%v)", ext, prefix, b, err)
		}
	}
	out := filepath.Join(dir, "ab.json")
	if code := run([]string{"report", "--base", in, "--cand", in, "-o", out}); code != 2 {
		t.Errorf("-o ab.json: exit %d, want 2", code)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("-o ab.json: a file was written")
	}
}

// TestBadThresholdBeforeWork checks that a threshold naming a figure no
// results file can hold exits 2 in one line before any work: the relay
// given is never connected to, and no results file is written.
func TestBadThresholdBeforeWork(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			c.Close()
		}
	}()
	url := "ws://" + ln.Addr().String()
	dir := t.TempDir()
	for _, args := range [][]string{
		{"run", "--relay", url, "--events", "10", "--threshold", "publish.ok.p99.5<5ms"},
		{"load", "--relay", url, "--threshold", "publish.ok.p99ms<5"},
		{"compare", "--relays", url, "--threshold", "query.eose.p75<5ms"},
		{"conformance", "--relay", url, "--threshold", "publish.latency.p99<5ms"},
	} {
		out := filepath.Join(dir, args[0]+".json")
		if code := run(append(args, "--json", out)); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%v: a results file was written", args)
		}
	}
	ln.Close()
	if n := conns.Load(); n != 0 {
		t.Errorf("the relay was connected to %d times before the bad threshold was refused", n)
	}
}
