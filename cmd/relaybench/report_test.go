package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/relaybench/relaybench/results"
)

// writePassedPublish writes to path a results file of one passed run of
// relay r1: a publish phase of 5 events, all accepted. It returns path.
func writePassedPublish(t *testing.T, path string) string {
	t.Helper()
	f := &results.File{Tool: results.Tool{Name: "relaybench", Version: "test"}, Machine: results.Machine{OS: "linux", Arch: "amd64", Cores: 2},
		Command: "run", StartedAt: time.Unix(0, 0), FinishedAt: time.Unix(10, 0), Verdict: &results.Verdict{Status: 0, Outcome: "passed"},
		Runs: []results.Run{{Relay: results.Relay{Name: "r1", URL: "ws://127.0.0.1:1"}, Phases: []results.Phase{{Name: "publish", Duration: 1e9,
			Counts: map[string]int64{"sent": 5, "accepted": 5}, Rates: map[string]float64{"events_per_sec": 5}}}}}}
	if err := results.Write(path, f); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestReportSidesCLI runs the built binary with every documented form of
// --base/--cand: files listed after each flag (as a shell expands
// "before-*.json"), 2+2, 1+2 and 2+1 files, commas and repeated flags.
// Kong's slice flag took one file each and refused "2+2" with "unexpected
// argument" (exit 2); the n=B+C of the table shows each side got all its
// files, and -o names the file written on stderr.
func TestReportSidesCLI(t *testing.T) {
	dir := t.TempDir()
	in := func(name string) string { return writePassedPublish(t, filepath.Join(dir, name)) }
	a1, a2, b1, b2 := in("before-1.json"), in("before-2.json"), in("after-1.json"), in("after-2.json")
	for _, tc := range []struct {
		args []string
		n    string
	}{
		{[]string{"--base", a1, a2, "--cand", b1, b2}, "n=2+2"},
		{[]string{"--base", a1, "--cand", b1, b2}, "n=1+2"},
		{[]string{"--base", a1, a2, "--cand", b1}, "n=2+1"},
		{[]string{"--base", a1 + "," + a2, "--cand=" + b1 + "," + b2}, "n=2+2"},
		{[]string{"--base", a1, "--base", a2, "--cand", b1, "-f", "summary"}, "n=2+1"},
		{[]string{"--cand", b1, b2, "--base", a1, a2, "--title", "T"}, "n=2+2"},
	} {
		r := runCLI(t, append([]string{"report"}, tc.args...)...)
		if r.code != 0 || !strings.Contains(r.stdout, tc.n) {
			t.Errorf("report %v: exit %d, want 0 and %q in the table; stderr %q", tc.args, r.code, tc.n, r.stderr)
		}
	}
	out := filepath.Join(dir, "ab.html")
	r := runCLI(t, "report", "--base", a1, a2, "--cand", b1, b2, "-o", out)
	if b, err := os.ReadFile(out); r.code != 0 || err != nil || !strings.Contains(string(b), "n=2+2") {
		t.Errorf("-o ab.html: exit %d, stderr %q, file %v", r.code, r.stderr, err)
	}
	if r.stdout != "" || strings.TrimSpace(r.stderr) != "report: "+out {
		t.Errorf("-o ab.html: stdout %q, stderr %q; want the file named on stderr, nothing on stdout", r.stdout, r.stderr)
	}
	r = runCLI(t, "report", a1, "--base", a2, "--cand", b1)
	if r.code == 0 || !strings.Contains(r.stderr, "unassigned: "+a1) {
		t.Errorf("a file on no side: exit %d, stderr %q; want it named", r.code, r.stderr)
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
// TestReportChartsOnly: report --charts DIR writes the charts and says
// where in one line on stderr, as -o FILE does, without the terminal
// summary on stdout; with -o the report is written too.
func TestReportChartsOnly(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "r.json")
	f := &results.File{Tool: results.Tool{Name: "relaybench", Version: "test"}, Command: "compare", StartedAt: time.Unix(0, 0), FinishedAt: time.Unix(10, 0)}
	for _, url := range []string{"ws://127.0.0.1:1", "ws://127.0.0.1:2"} { // two relays: bar charts
		f.Runs = append(f.Runs, results.Run{Relay: results.Relay{URL: url}, Phases: []results.Phase{{Name: "publish", Duration: 1e9,
			Counts: map[string]int64{"sent": 5, "accepted": 5}, Rates: map[string]float64{"events_per_sec": 5}}}})
	}
	if err := results.Write(in, f); err != nil {
		t.Fatal(err)
	}
	charts := filepath.Join(dir, "charts")
	code, stdout, stderr := runHere(t, "report", "--charts", charts, in)
	if code != 0 || stdout != "" || !regexp.MustCompile(`^charts: `+regexp.QuoteMeta(charts)+` \(\d+ files, PNG and SVG\)\n$`).MatchString(stderr) {
		t.Fatalf("exit %d, want 0, no stdout and one charts line\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if ents, err := os.ReadDir(charts); err != nil || len(ents) == 0 {
		t.Fatalf("no charts written (%v)", err)
	}
	md := filepath.Join(dir, "r.md")
	code, stdout, stderr = runHere(t, "report", "--charts", filepath.Join(dir, "c2"), "-o", md, in)
	if code != 0 || stdout != "" || !strings.Contains(stderr, "report: "+md+"\n") || !strings.Contains(stderr, "charts: ") {
		t.Fatalf("with -o: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}

func TestReportABFormats(t *testing.T) {
	dir := t.TempDir()
	in := writePassedPublish(t, filepath.Join(dir, "r.json"))
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
	url, connections := countingListener(t)
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
	if n := connections(); n != 0 {
		t.Errorf("the relay was connected to %d times before the bad threshold was refused", n)
	}
}

// `report FILE` prints the brief summary the run printed (results keys in
// its notes in words); `report -v FILE` the full one, keys as written.
func TestReportBriefAsTheRunPrinted(t *testing.T) {
	dir := t.TempDir()
	h := &results.Histogram{Count: 10, Min: 1e6, Max: 3e6, Percentiles: map[string]int64{"50": 1e6, "99": 2e6}}
	f := &results.File{Tool: results.Tool{Name: "relaybench"}, Machine: results.Machine{CPUModel: "cpu", Cores: 2}, Command: "burst",
		Runs: []results.Run{{Relay: results.Relay{Name: "r", URL: "ws://127.0.0.1:1"}, Phases: []results.Phase{{Name: "burst",
			Counts:  map[string]int64{"sent": 10, "accepted": 10},
			Latency: map[string]*results.Histogram{"ok": h, "ok_from_intended": h},
			Notes:   []string{"events went out late; ok_from_intended counts from the scheduled time"}}}}},
		Verdict: &results.Verdict{Outcome: "passed"}}
	in := filepath.Join(dir, "r.json")
	if err := results.Write(in, f); err != nil {
		t.Fatal(err)
	}
	code, brief, stderr := runHere(t, "report", in)
	if code != 0 || strings.Contains(brief, "ok_from_intended") || !strings.Contains(brief, "OK latency (from intended send time) counts") {
		t.Errorf("report FILE: exit %d (%s); want the brief summary, keys in words:\n%s", code, stderr, brief)
	}
	code, full, stderr := runHere(t, "report", "-v", in)
	if code != 0 || !strings.Contains(full, "; ok_from_intended counts") || !strings.Contains(full, "cpu") {
		t.Errorf("report -v FILE: exit %d (%s); want the full summary:\n%s", code, stderr, full)
	}
}

// TestReportNamesEachFile: `report run-*.json` printed the summaries back
// to back, nothing naming which file each came from; each is now headed by
// its file's name. One file has no heading.
func TestReportNamesEachFile(t *testing.T) {
	dir := t.TempDir()
	f := &results.File{Tool: results.Tool{Name: "relaybench"}, Machine: results.Machine{CPUModel: "cpu", Cores: 2}, Command: "run",
		Runs: []results.Run{{Relay: results.Relay{Name: "r", URL: "ws://127.0.0.1:1"}, Phases: []results.Phase{{Name: "publish", Duration: 1e9,
			Counts: map[string]int64{"sent": 5, "accepted": 5}}}}},
		Verdict: &results.Verdict{Outcome: "passed"}}
	a, b := filepath.Join(dir, "run-a.json"), filepath.Join(dir, "run-b.json")
	for _, p := range []string{a, b} {
		if err := results.Write(p, f); err != nil {
			t.Fatal(err)
		}
	}
	code, out, stderr := runHere(t, "report", a, b)
	ia, ib := strings.Index(out, "File 1 of 2: "+a+"\n"), strings.Index(out, "\nFile 2 of 2: "+b+"\n")
	if code != 0 || ia != 0 || ib <= ia {
		t.Errorf("exit %d (%s); want each summary headed by its file:\n%s", code, stderr, out)
	}
	if _, one, _ := runHere(t, "report", a); strings.Contains(one, "File 1") {
		t.Errorf("one file got a heading:\n%s", one)
	}
}
