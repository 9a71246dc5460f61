package main

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/relaybench/relaybench/results"
)

// gateResults writes a results file of relay "r" with one run per rate.
func gateResults(t *testing.T, dir, name string, events int, rates ...float64) string {
	t.Helper()
	f := &results.File{Tool: results.Tool{Name: "relaybench"}, Machine: results.Machine{CPUModel: "cpu", Cores: 2, OS: "linux", Arch: "amd64"}, Command: "compare"}
	for i, rate := range rates {
		f.Runs = append(f.Runs, results.Run{
			Relay:  results.Relay{Name: "r", URL: "ws://127.0.0.1:1"},
			Corpus: results.Corpus{Seed: 1, Events: events, Authors: 10, AvgSize: 64},
			Repeat: i + 1,
			Params: map[string]any{"events": events, "relays": []string{"r=" + name}},
			Phases: []results.Phase{
				{Name: "publish", Counts: map[string]int64{"sent": int64(events)}, Rates: map[string]float64{"events_per_sec": rate},
					Latency: map[string]*results.Histogram{"ok": {Count: 10, Min: 1e6, Max: 3e6, Percentiles: map[string]int64{"50": 1e6, "99": 2e6}}}},
				{Name: "query", Verification: &results.Verification{Verified: true, Passed: true, Checked: 5}},
			},
		})
	}
	f.Verdict = &results.Verdict{Status: 0, Outcome: "passed"}
	p := filepath.Join(dir, name)
	if err := results.Write(p, f); err != nil {
		t.Fatal(err)
	}
	return p
}

func readJUnit(t *testing.T, path string) (tests, failures, errs int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Errors   int `xml:"errors,attr"`
	}
	if err := xml.Unmarshal(b, &s); err != nil {
		t.Fatalf("%s: not valid XML: %v", path, err)
	}
	return s.Tests, s.Failures, s.Errors
}

// exitCase is a command line's arguments and the exit status it must end with.
type exitCase struct {
	args []string
	code int
}

// wantExits runs the CLI in this process with prefix and each case's
// arguments, and wants the case's exit status.
func wantExits(t *testing.T, cases []exitCase, prefix ...string) {
	t.Helper()
	for _, c := range cases {
		args := append(append([]string{}, prefix...), c.args...)
		if code := run(args); code != c.code {
			t.Errorf("%v: exit %d, want %d", args, code, c.code)
		}
	}
}

func TestReportThresholdExitStatus(t *testing.T) {
	dir := t.TempDir()
	in := gateResults(t, dir, "r.json", 100, 5000)
	junit := filepath.Join(dir, "j.xml")
	toml := filepath.Join(dir, "t.toml")
	os.WriteFile(toml, []byte(`thresholds = ["publish.ok.p99<20ms", "verification==passed"]`), 0o644)
	wantExits(t, []exitCase{
		{[]string{"--threshold", "publish.rate>1000", "--thresholds", toml}, 0},
		{[]string{"--threshold", "publish.rate>1M"}, 5},
		{[]string{"--threshold", "publish.ok.p99<1ms"}, 5},
		{[]string{"--threshold", "publish.ok.p98<1ms"}, 2}, // no such figure: usage, naming what exists
		{[]string{"--threshold", "publish.ok.p99<1"}, 2},   // a latency needs a unit
		{[]string{"--threshold", "publish.rate{relay=x}>1"}, 2},
		{[]string{"--threshold", "publish.rate>1M", "--junit", junit}, 5},
	}, "report", in)
	if tests, failures, _ := readJUnit(t, junit); tests != 3 || failures != 2 {
		t.Errorf("junit: %d tests, %d failures; want 3 (threshold, verification, verdict), 2", tests, failures)
	}
}

func TestReportFailOnExitStatus(t *testing.T) {
	dir := t.TempDir()
	base := gateResults(t, dir, "base.json", 100, 1000, 1010, 990, 1005, 995)
	slower := gateResults(t, dir, "slower.json", 100, 800, 810, 790, 805, 795)
	noisy := gateResults(t, dir, "noisy.json", 100, 500, 1300, 650, 1200, 800)
	noisyBase := gateResults(t, dir, "noisybase.json", 100, 1000, 1400, 600, 1100, 900)
	other := gateResults(t, dir, "other.json", 200, 800, 810, 790, 805, 795)
	few := gateResults(t, dir, "few.json", 100, 800, 810)
	junit := filepath.Join(dir, "j.xml")
	wantExits(t, []exitCase{
		{[]string{"--base", base, "--cand", slower, "--fail-on", "publish.rate:-10%"}, 5},           // significant and beyond
		{[]string{"--base", base, "--cand", slower, "--fail-on", "publish.rate:-30%"}, 0},           // significant, within
		{[]string{"--base", noisyBase, "--cand", noisy, "--fail-on", "publish.rate:-10%"}, 0},       // beyond but "~"
		{[]string{"--base", base, "--cand", other, "--fail-on", "publish.rate:-10%"}, 2},            // other corpus: refused
		{[]string{"--base", base, "--cand", other, "--fail-on", "publish.rate:-30%", "--force"}, 0}, // forced
		{[]string{"--base", base, "--cand", few, "--fail-on", "publish.rate:-10%"}, 2},              // 5+2 runs: never significant
		{[]string{"--base", base, "--cand", slower, "--fail-on", "publish.rate"}, 2},                // grammar
		{[]string{"--base", base, "--cand", slower, "--fail-on", "publish.rate:-10%", "-f", "md", "--junit", junit}, 5},
		{[]string{base, "--fail-on", "publish.rate:-10%"}, 2}, // --fail-on without --base/--cand
	}, "report")
	if tests, failures, _ := readJUnit(t, junit); tests != 1 || failures != 1 {
		t.Errorf("fail-on junit: %d tests, %d failures", tests, failures)
	}
}

// A --fail-on that can never be judged (too few runs a side) is a usage
// error found before the report: exit 2 with nothing written, not the
// whole table and then the error.
func TestReportFailOnUsageBeforeReport(t *testing.T) {
	dir := t.TempDir()
	base := gateResults(t, dir, "base.json", 100, 1000)
	cand := gateResults(t, dir, "cand.json", 100, 800)
	out := filepath.Join(dir, "ab.txt")
	if code := run([]string{"report", "--base", base, "--cand", cand, "--fail-on", "publish.rate:-10%", "-o", out}); code != 2 {
		t.Errorf("1+1 runs with --fail-on: exit %d, want 2", code)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a report was written before the usage error: %v", err)
	}
	if code := run([]string{"report", "--base", base, "--cand", cand, "-o", out}); code != 0 {
		t.Errorf("1+1 runs without --fail-on: exit %d, want 0 (a report)", code)
	}
	if _, err := os.Stat(out); err != nil {
		t.Errorf("no report without --fail-on: %v", err)
	}
}

// TestRunThresholds runs the embedded relay with thresholds: the table, the
// results file, the exit status and JUnit; --json - stays pure JSON.
func TestRunThresholds(t *testing.T) {
	dir := t.TempDir()
	common := []string{"--events", "300", "--queries", "10", "--concurrency", "2", "--out", dir, "--no-progress", "--cache-dir", filepath.Join(dir, "cache"), "--anchor", testAnchor}
	junit := filepath.Join(dir, "j.xml")
	res := runCLI(t, append([]string{"run", "--json", filepath.Join(dir, "a.json"), "--junit", junit,
		"--threshold", "publish.ok.p99<1m", "--threshold", "verification==passed", "--threshold", "publish.rate>1e12"}, common...)...)
	if res.code != 5 {
		t.Fatalf("exit %d, want 5\n%s", res.code, res.stderr)
	}
	if !strings.Contains(res.stdout, "Thresholds:") || !strings.Contains(res.stdout, "FAIL") || !strings.Contains(res.stdout, "THRESHOLDS FAILED (exit 5)") {
		t.Errorf("summary lacks the thresholds table:\n%s", res.stdout)
	}
	f, err := results.Read(filepath.Join(dir, "a.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Thresholds) != 3 || !f.Thresholds[0].Passed || !f.Thresholds[1].Passed || f.Thresholds[2].Passed || f.Verdict.Status != 5 {
		t.Errorf("stored thresholds %+v, verdict %+v", f.Thresholds, f.Verdict)
	}
	if tests, failures, _ := readJUnit(t, junit); tests < 5 || failures != 2 {
		t.Errorf("junit: %d tests, %d failures (want the rate threshold and the verdict)", tests, failures)
	}
	// A phase or latency run does not write: usage, before anything runs,
	// in one line naming it and, once, what run writes there.
	for expr, want := range map[string]string{
		"query.ok.p99<1s":      "run's phase query writes no latency ok; its latencies are eose, first_event, auth",
		"publish.okk.p99<20ms": "run's phase publish writes no latency okk; its latencies are ok, ok_refused, auth",
		"qurey.eose.p99<5ms":   "run writes no phase qurey; its phases are publish, query",
		"swep/1024.rate>1":     "run writes no phase swep; its phases are publish, query, sweep",
	} {
		res = runCLI(t, append([]string{"run", "--json", filepath.Join(dir, "c.json"), "--workloads", "sweep", "--threshold", expr}, common...)...)
		if res.code != 2 || res.stdout != "" {
			t.Errorf("%s: exit %d, want 2 before any work\n%s%s", expr, res.code, res.stdout, res.stderr)
		}
		wantOneLine(t, res.stderr, `threshold "`+expr+`": `+want)
		if _, err := os.Stat(filepath.Join(dir, "c.json")); err == nil {
			t.Fatalf("%s: a results file was written for a refused threshold", expr)
		}
	}
	// A key the results do not hold (keys are not known before the run):
	// usage, after the run, naming what exists.
	res = runCLI(t, append([]string{"run", "--json", "-", "--threshold", "query.no_such_key>1"}, common...)...)
	if res.code != 2 || !strings.Contains(res.stderr, "query has latencies eose") {
		t.Errorf("unknown figure: exit %d\n%s", res.code, res.stderr)
	}
	var pure results.File
	if err := json.Unmarshal([]byte(res.stdout), &pure); err != nil || pure.Verdict == nil || pure.Verdict.Status != 2 || len(pure.Thresholds) != 1 {
		t.Errorf("--json - is not pure JSON with the verdict: %v\n%.300s", err, res.stdout)
	}
	// A bad threshold is refused before anything runs.
	res = runCLI(t, append([]string{"run", "--json", filepath.Join(dir, "b.json"), "--threshold", "publish.rate>fast"}, common...)...)
	if res.code != 2 {
		t.Errorf("bad threshold: exit %d", res.code)
	}
	if _, err := os.Stat(filepath.Join(dir, "b.json")); err == nil {
		t.Error("a results file was written for a refused command line")
	}
}

// TestCIRecipe runs docs/ci/relaybench-gate.sh, the script the GitHub
// Actions workflow runs, against the embedded relay started from a command
// template (as the workflow starts a relay's builds), with a small corpus.
func TestCIRecipe(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	bin := relaybenchBin(t)
	script, _ := filepath.Abs("../../docs/ci/relaybench-gate.sh")
	wf, err := os.ReadFile("../../docs/ci/github-actions.yml")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"relaybench-gate.sh", "REPEAT:", "BENCH_ARGS:", "FAIL_ON:", "THRESHOLD_ARGS:", "upload-artifact", "report.html", "comparison.md", "junit-"} {
		if !strings.Contains(string(wf), want) {
			t.Errorf("the workflow does not mention %q", want)
		}
	}
	relay := "myrelay=" + bin + " relay serve --addr 127.0.0.1:{port} --data-dir {dir}"
	gate := func(out, thresholds string) (int, string) {
		cmd := exec.Command("sh", script, relay, relay, out)
		cmd.Env = append(os.Environ(), "RELAYBENCH="+bin, "REPEAT=4",
			"BENCH_ARGS=--events 300 --queries 10 --concurrency 2",
			"THRESHOLD_ARGS="+thresholds, "FAIL_ON=publish.rate:-90% query.eose.p99:+900%")
		done := make(chan struct{})
		timer := time.AfterFunc(4*time.Minute, func() { cmd.Process.Kill(); close(done) })
		b, _ := cmd.CombinedOutput()
		timer.Stop()
		return cmd.ProcessState.ExitCode(), string(b)
	}
	out := filepath.Join(t.TempDir(), "out")
	code, log := gate(out, "--threshold verification==passed --threshold publish.ok.p99<1m")
	if code != 0 {
		t.Fatalf("gate: exit %d\n%s", code, log)
	}
	for _, f := range []string{"base.json", "cand.json", "report.html", "comparison.md", "junit-candidate.xml", "junit-fail-on.xml"} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s not written: %v", f, err)
		}
	}
	md, _ := os.ReadFile(filepath.Join(out, "comparison.md"))
	for _, want := range []string{"# Baseline vs candidate", "Fail-on limits", "| publish.rate:-90% | myrelay |", "Candidate verdict: exit 0"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("comparison.md lacks %q:\n%s", want, md)
		}
	}
	if tests, failures, errs := readJUnit(t, filepath.Join(out, "junit-fail-on.xml")); tests != 2 || failures+errs != 0 {
		t.Errorf("fail-on junit: %d tests, %d failures, %d errors", tests, failures, errs)
	}
	// A threshold the candidate cannot meet fails the build with status 5.
	out2 := filepath.Join(t.TempDir(), "out")
	if code, log := gate(out2, "--threshold publish.rate>1e12"); code != 5 {
		t.Errorf("unmet threshold: exit %d, want 5\n%s", code, log)
	}
}

// TestThresholdPlanBeforeWork checks that a figure the command does not
// write is refused in one line before any work, for run, compare, a
// declared workload's command (keys and corpus) and every hand-written
// live command (load, find-max, subscribe, mixed, clients, sync,
// conformance), a conformance check that will not run (conformance,
// compare), and that the relay is never connected to.
func TestThresholdPlanBeforeWork(t *testing.T) {
	url, connections := countingListener(t)
	dir := t.TempDir()
	for i, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--relay", url, "--threshold", "publish.ok.p99<1s", "--threshold", "publish.okk.p99<20ms"},
			`threshold "publish.okk.p99<20ms": run's phase publish writes no latency okk; its latencies are ok, ok_refused, auth (each with STAT p50`},
		{[]string{"compare", "--relays", url, "--workloads", "count", "--threshold", "count.rate>1", "--threshold", "qurey.eose.p99<5ms"},
			`threshold "qurey.eose.p99<5ms": compare writes no phase qurey; its phases are count, publish, query`},
		{[]string{"burst", "--relay", url, "--threshold", "brust.rate>1"},
			`threshold "brust.rate>1": burst writes no phase brust; its phases are burst`},
		{[]string{"count", "--relay", url, "--threshold", "publish.rate>1", "--threshold", "query.rate>1"},
			`threshold "query.rate>1": count writes no phase query; its phases are count, publish`},
		{[]string{"load", "--relay", url, "--threshold", "load.ok.p99<1s", "--threshold", "publish.rate>1"},
			`threshold "publish.rate>1": load writes no phase publish; its phases are load`},
		{[]string{"load", "--relay", url, "--load-kind", "query", "--threshold", "laod.rate>1"},
			`threshold "laod.rate>1": load writes no phase laod; its phases are load, publish_query_corpus`},
		{[]string{"find-max", "--relay", url, "--threshold", "find-max.rate>1", "--threshold", "findmax.rate>1"},
			`threshold "findmax.rate>1": find-max writes no phase findmax; its phases are find-max`},
		{[]string{"subscribe", "--relay", url, "--threshold", "subscribe.deliver.p99<1s", "--threshold", "publish.ok.p99<1s"},
			`threshold "publish.ok.p99<1s": subscribe writes no phase publish; its phases are subscribe`},
		{[]string{"mixed", "--relay", url, "--threshold", "mixed.ok.p99<1s", "--threshold", "publish.okk.p99<1s"},
			`threshold "publish.okk.p99<1s": mixed's phase publish writes no latency okk; its latencies are ok, ok_refused, auth (each with STAT p50`},
		{[]string{"mixed", "--relay", url, "--skip-preload", "--threshold", "publish.ok.p99<1s"},
			`threshold "publish.ok.p99<1s": mixed writes no phase publish; its phases are mixed`},
		{[]string{"clients", "--relay", url, "--threshold", "clients.eose.p99<1s", "--threshold", "query.eose.p99<1s"},
			`threshold "query.eose.p99<1s": clients writes no phase query; its phases are clients, publish`},
		{[]string{"sync", "--relay", url, "--threshold", "negentropy/initial.sync.p99<1s", "--threshold", "sync.rate>1"},
			`threshold "sync.rate>1": sync writes no phase sync; its phases are negentropy, publish`},
		{[]string{"conformance", "--relay", url, "--threshold", "conformance.failed==0", "--threshold", "publish.rate>1"},
			`threshold "publish.rate>1": conformance writes no phase publish; its phases are conformance`},
		{[]string{"conformance", "--relay", url, "--under-load", "10", "--threshold", "under-load.ok.p99<1s", "--threshold", "load.ok.p99<1s"},
			`threshold "load.ok.p99<1s": conformance writes no phase load; its phases are conformance, under-load`},
		{[]string{"conformance", "--relay", url, "--check", "req.limit-zero,nip11.cors", "--threshold", "conformance.failed==0", "--threshold", "conformance.req.limit-zero==pass",
			"--threshold", "conformance.req.multi-filter-union==pass"},
			`threshold "conformance.req.multi-filter-union==pass": conformance runs no check req.multi-filter-union; its checks are req.limit-zero, nip11.cors; its tallies conformance.checks, conformance.failed,`},
		{[]string{"conformance", "--relay", url, "--threshold", "conformance.req.nope==pass"},
			`threshold "conformance.req.nope==pass": conformance runs no check req.nope; its checks are req.multi-filter-union, `},
		{[]string{"compare", "--relays", url, "--threshold", "conformance.failed==0"},
			`threshold "conformance.failed==0": compare runs no conformance check without --conformance`},
		{[]string{"compare", "--relays", url, "--conformance", "--check", "nip11.cors", "--threshold", "conformance.nip11.cors==pass", "--threshold", "conformance.req.limit-zero==pass"},
			`threshold "conformance.req.limit-zero==pass": compare runs no check req.limit-zero; its checks are nip11.cors; its tallies`},
	} {
		out := filepath.Join(dir, fmt.Sprintf("%d-%s.json", i, c.args[0]))
		code, stdout, stderr := runHere(t, append(c.args, "--json", out)...)
		if code != 2 || stdout != "" {
			t.Errorf("%v: exit %d, want 2 before any work\n%s", c.args, code, stdout)
		}
		wantOneLine(t, stderr, c.want)
		if strings.Count(stderr, "p99.99") > 1 {
			t.Errorf("%v: the statistics are listed more than once: %s", c.args, stderr)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%v: a results file was written", c.args)
		}
	}
	if n := connections(); n != 0 {
		t.Errorf("the relay was connected to %d times before the threshold was refused", n)
	}
}
