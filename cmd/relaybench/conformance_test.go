package main

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/relaybench/relaybench/conformance"
	"github.com/relaybench/relaybench/internal/testkit"
	"github.com/relaybench/relaybench/internal/testrelay"
	"github.com/relaybench/relaybench/judge"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/wire"
)

// checkTimeout is the conformance checks' wait in these tests: a hang
// guard, never reached by a relay that answers (a check that waits for
// something not to happen uses a sync point, not this wait).
const checkTimeout = "60s"

// runConformance runs `relaybench conformance` with args (results file in
// a fresh folder) and returns its outcome and results file.
func runConformance(t *testing.T, args ...string) (cliResult, *results.File) {
	t.Helper()
	res, f, _ := runRecorded(t, relaybenchBin(t),
		append([]string{"conformance", "--check-timeout", checkTimeout, "--cache-dir", t.TempDir()}, args...)...)
	if f.Verdict == nil || f.Verdict.Status != res.code {
		t.Errorf("exit %d, results verdict %+v", res.code, f.Verdict)
	}
	return res, f
}

// checkStatuses maps each check of the run to its status.
func checkStatuses(t *testing.T, f *results.File) map[string]results.CheckStatus {
	t.Helper()
	if len(f.Runs) != 1 {
		t.Fatalf("%d runs", len(f.Runs))
	}
	m := map[string]results.CheckStatus{}
	for _, c := range f.Runs[0].Conformance {
		m[c.ID] = c.Status
		if c.Sentence == "" || c.Level == "" || c.NIP == 0 {
			t.Errorf("%s: no sentence, level or NIP: %+v", c.ID, c)
		}
	}
	return m
}

// TestConformanceEmbedded: the embedded relay (native store) breaks no
// MUST: every check runs, none fails, and the command exits 0 with the
// table printed and the checks in the results file.
func TestConformanceEmbedded(t *testing.T) {
	integration(t)
	res, f := runConformance(t)
	st := checkStatuses(t, f)
	if len(st) != len(conformance.Checks()) {
		t.Errorf("%d checks in the results, want %d", len(st), len(conformance.Checks()))
	}
	for _, c := range f.Runs[0].Conformance {
		if c.Status == results.CheckFail || c.Status == results.CheckUnknown || c.Status == results.CheckNotRun {
			t.Errorf("%s: %s: %s\n  %s", c.ID, c.Status, c.Detail, strings.Join(c.Evidence, "\n  "))
		}
	}
	if res.code != judge.Passed {
		t.Errorf("exit %d, want 0\n%s", res.code, lastLines(res.stdout+res.stderr, 30))
	}
	if !strings.Contains(res.stdout, "Conformance:") || !strings.Contains(res.stdout, "req.same-id-replaces") {
		t.Errorf("no conformance table in the summary:\n%s", res.stdout)
	}
	if f.Runs[0].Params["store"] != "native" || len(f.Runs[0].Phases) != 0 {
		t.Errorf("params %v, %d phases", f.Runs[0].Params, len(f.Runs[0].Phases))
	}
}

// TestConformanceBrokenMUST: a relay whose second REQ with the same
// subscription id does not replace the first breaks a MUST: exit 3, that
// check and no other failed, named in the summary, the verdict and the
// results with its evidence.
func TestConformanceBrokenMUST(t *testing.T) {
	integration(t)
	r := testrelay.Start(t, testrelay.Config{SameIDNoReplace: true})
	res, f := runConformance(t, "--relay", r.URL())
	if res.code != judge.WrongAnswers {
		t.Errorf("exit %d, want 3\n%s", res.code, lastLines(res.stdout+res.stderr, 30))
	}
	for id, s := range checkStatuses(t, f) {
		if (s == results.CheckFail) != (id == "req.same-id-replaces") {
			t.Errorf("%s: %s", id, s)
		}
	}
	if !strings.Contains(res.stdout, "FAIL req.same-id-replaces (NIP-01 MUST)") || !strings.Contains(res.stdout, "replacing the old one") {
		t.Errorf("the summary does not name the failed check with its sentence:\n%s", res.stdout)
	}
	if !strings.Contains(lastLines(res.stderr, 1), "WRONG ANSWERS: conformance req.same-id-replaces (NIP-01 MUST)") {
		t.Errorf("the verdict line does not name the check:\n%s", res.stderr)
	}
	for _, c := range f.Runs[0].Conformance {
		if c.ID == "req.same-id-replaces" && (len(c.Evidence) == 0 || c.Detail == "") {
			t.Errorf("the failed check has no detail or evidence: %+v", c)
		}
	}
}

// TestConformanceUnderLoad: --under-load runs the checks while a
// background open-loop publisher sends at a constant rate: its phase is
// in the results with every intended event accounted for, and the checks
// are judged as when idle (the native store breaks no MUST).
func TestConformanceUnderLoad(t *testing.T) {
	t.Parallel() // beside the package's other parallel tests: a busy machine's outcomes (relay or client short) are accepted; the checks' deadline is 60 s
	integration(t)
	res, f := runConformance(t, "--under-load", "100", "--load-duration", "4s")
	for _, c := range f.Runs[0].Conformance {
		if c.Status == results.CheckFail {
			t.Errorf("%s failed under load: %s", c.ID, c.Detail)
		}
	}
	if len(f.Runs[0].Conformance) != len(conformance.Checks()) {
		t.Errorf("%d checks", len(f.Runs[0].Conformance))
	}
	ph := f.Runs[0].Phase("under-load")
	if ph == nil {
		t.Fatalf("no under-load phase; phases %d", len(f.Runs[0].Phases))
	}
	// 0; 4 when the relay did not keep up; 1 only when the machine was too
	// busy for the load to start its events (booked client-limited): never
	// a wrong answer.
	if c := res.code; c != judge.Passed && c != judge.Incomplete && (c != judge.Error || judge.ClientShort(ph) == "") {
		t.Errorf("exit %d\n%s", res.code, lastLines(res.stdout+res.stderr, 30))
	}
	a := ph.Account(results.OpEvent)
	if a == nil || a.Requested != 400 || !a.Balanced() || a.Accepted == 0 {
		t.Errorf("under-load account %+v", a)
	}
	if p := f.Runs[0].Params; p["under_load"] != 100.0 || p["load_duration"] != "4s" {
		t.Errorf("params %v", p)
	}
	var noted bool
	for _, n := range f.Runs[0].Notes {
		noted = noted || strings.Contains(n, "conformance checks run under a background load")
	}
	if !noted {
		t.Errorf("no note on the load: %v", f.Runs[0].Notes)
	}
	// The rounds after the first print about ten lines, not one each; the
	// statuses in words, as the table; the heading names the phase once.
	if n := strings.Count(res.stderr, "under-load: "); n > 13 || strings.Contains(res.stderr, "not-announced") {
		t.Errorf("%d under-load progress lines (want at most 13), or a status as a key:\n%s", n, lastLines(res.stderr, 20))
	}
	if !strings.Contains(res.stdout, "\nUnder-load Performance:") {
		t.Errorf("want the heading 'Under-load Performance:':\n%s", lastLines(res.stdout, 80))
	}
}

// TestConformanceThreshold: a check's status and the count of failed
// checks are figures for --threshold: met (0), not met (5), a check not
// in the results (2), and a wrong answer comes first (3).
func TestConformanceThreshold(t *testing.T) {
	integration(t)
	honest := testrelay.Start(t, testrelay.Config{})
	only := []string{"--relay", honest.URL(), "--check", "req.limit-zero,req.multi-filter-union"}
	res, f := runConformance(t, append(only, "--threshold", "conformance.req.limit-zero==pass", "--threshold", "conformance.failed==0")...)
	if res.code != judge.Passed || len(f.Thresholds) != 2 || !f.Thresholds[0].Passed || !f.Thresholds[1].Passed {
		t.Errorf("exit %d, thresholds %+v\n%s", res.code, f.Thresholds, lastLines(res.stderr, 10))
	}
	if len(f.Runs[0].Conformance) != 2 {
		t.Errorf("--check: %d checks ran, want 2", len(f.Runs[0].Conformance))
	}
	res, _ = runConformance(t, append(only, "--threshold", "conformance.req.limit-zero!=pass")...)
	if res.code != judge.ThresholdsFailed {
		t.Errorf("exit %d, want 5\n%s", res.code, lastLines(res.stderr, 10))
	}
	// Refused before any check, in one line naming the checks there are.
	res = runCLI(t, append(append([]string{"conformance"}, only...), "--threshold", "conformance.req.nope==pass", "--out", t.TempDir())...)
	if res.code != judge.Usage || res.stdout != "" || !strings.Contains(res.stderr, "runs no check req.nope; its checks are req.multi-filter-union, req.limit-zero;") {
		t.Errorf("exit %d, want 2 naming the checks there are\n%s", res.code, lastLines(res.stderr, 10))
	}
	broken := testrelay.Start(t, testrelay.Config{SameIDNoReplace: true})
	res, f = runConformance(t, "--relay", broken.URL(), "--check", "req.same-id-replaces", "--threshold", "conformance.req.same-id-replaces==fail")
	if res.code != judge.WrongAnswers || len(f.Thresholds) != 1 || !f.Thresholds[0].Passed {
		t.Errorf("exit %d, thresholds %+v", res.code, f.Thresholds)
	}
}

// TestConformanceFlags: bad values are usage errors before anything runs.
func TestConformanceFlags(t *testing.T) {
	wantUsage(t, []usageCase{
		{[]string{"conformance", "--check", "req.nope"}, []string{"--check req.nope: no such check"}},
		{[]string{"conformance", "--check-timeout", "0s"}, []string{"--check-timeout 0s: must be a positive duration"}},
		{[]string{"conformance", "--under-load", "-5"}, []string{"--under-load -5: must not be negative"}},
		{[]string{"conformance", "--under-load", "10", "--load-duration", "0s"}, []string{"--load-duration 0s: must be a positive duration"}},
		{[]string{"compare", "--relays", "khatru-native", "--conformance", "--check", "x"}, []string{"--check x: no such check"}},
	})
}

// TestConformanceReportsEscape: a relay that refuses every event with a
// hostile reason: the checks that need stored events are not run (exit 4,
// never wrong), the reason is in their detail and evidence, and every
// report format made from the results file shows it inert.
func TestConformanceReportsEscape(t *testing.T) {
	integration(t)
	reason := "blocked: <script>alert(1)</script> | `tick` [x](javascript:1) \x1b[31mRED\u202e\r\n# head"
	r := testrelay.Start(t, testrelay.Config{RefuseEvery: 1, RefuseReason: reason})
	junit := filepath.Join(t.TempDir(), "j.xml")
	res, f := runConformance(t, "--relay", r.URL(), "--check", "req.multi-filter-union,req.ids-and-conditions", "--junit", junit)
	if res.code != judge.Incomplete {
		t.Errorf("exit %d, want 4\n%s", res.code, lastLines(res.stdout+res.stderr, 20))
	}
	for id, s := range checkStatuses(t, f) {
		if s != results.CheckNotRun {
			t.Errorf("%s: %s, want not-run", id, s)
		}
	}
	if c := f.Runs[0].Conformance[0]; !strings.Contains(strings.Join(c.Evidence, "\n"), "alert(1)") {
		t.Errorf("the reason is not in the evidence: %v", c.Evidence)
	}
	path := filepath.Join(t.TempDir(), "c.json")
	if err := results.Write(path, f); err != nil {
		t.Fatal(err)
	}
	outs := map[string]string{"summary": res.stdout}
	for _, format := range []string{"md", "html", "csv", "json"} {
		rep := runCLI(t, "report", "-f", format, path)
		if rep.code != 0 {
			t.Fatalf("report -f %s: exit %d: %s", format, rep.code, rep.stderr)
		}
		outs[format] = rep.stdout
	}
	j, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	outs["junit"] = string(j)
	for name, out := range outs {
		// JSON keeps the relay's words as data (encoded: no raw control
		// character); every other format shows them inert.
		if bad := "\x1b\u202e\r"; name == "json" && strings.ContainsAny(out, "\x1b\r") || name != "json" && strings.ContainsAny(out, bad) {
			t.Errorf("%s holds a raw control or bidi character", name)
		}
		if !strings.Contains(out, "req.ids-and-conditions") {
			t.Errorf("%s does not name the check", name)
		}
	}
	if strings.Contains(outs["html"], "<script") {
		t.Error("the HTML report holds the relay's tag raw")
	}
	testkit.WantInertCSV(t, strings.NewReader(outs["csv"]))
	for _, line := range strings.Split(outs["md"], "\n") {
		if strings.Contains(line, "<script") && !strings.HasPrefix(line, "- `") {
			t.Errorf("Markdown holds the relay's tag outside a code span: %s", line)
		}
	}
}

// TestConformanceCompare: compare --conformance runs the checks against
// each relay after its benchmark; the summary and the Markdown comparison
// show the table of check × relay, and the relay that breaks a MUST makes
// the comparison exit 3, naming it.
func TestConformanceCompare(t *testing.T) {
	integration(t)
	broken := testrelay.Start(t, testrelay.Config{SameIDNoReplace: true})
	res, f, out := runRecorded(t, relaybenchBin(t), "compare", "--relays", "khatru-native,"+broken.URL(), "--events", "200", "--queries", "10",
		"--anchor", testAnchor, "--conformance", "--check", "req.same-id-replaces,req.limit-zero", "--check-timeout", checkTimeout,
		"--cache-dir", t.TempDir())
	if res.code != judge.WrongAnswers {
		t.Errorf("exit %d, want 3\n%s", res.code, lastLines(res.stdout+res.stderr, 30))
	}
	if len(f.Runs) != 2 || len(f.Runs[0].Conformance) != 2 || len(f.Runs[1].Conformance) != 2 {
		t.Fatalf("runs %d, checks %d", len(f.Runs), len(f.Runs[0].Conformance))
	}
	if f.Verdict == nil || !strings.Contains(strings.Join(f.Verdict.Reasons, "; "), broken.URL()+" conformance req.same-id-replaces") {
		t.Errorf("verdict %+v", f.Verdict)
	}
	var row bool
	for _, l := range strings.Split(res.stdout, "\n") {
		row = row || strings.Join(strings.Fields(l), " ") == "req.same-id-replaces 01 MUST pass FAIL"
	}
	if !strings.Contains(res.stdout, "Conformance:\n  Check") || !row {
		t.Errorf("no check × relay table in the summary:\n%s", res.stdout)
	}
	// --json r.json asked for that one file: the Markdown comparison is
	// report's to make from it.
	if _, err := os.Stat(filepath.Join(out, "r.md")); err == nil {
		t.Error("compare --json r.json also wrote r.md")
	}
	mdPath := filepath.Join(out, "c.md")
	if r := runCLI(t, "report", filepath.Join(out, "r.json"), "--format", "md", "-o", mdPath); r.code != 0 {
		t.Fatalf("report: exit %d: %s", r.code, r.stderr)
	}
	md, err := os.ReadFile(mdPath)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "| req.same-id-replaces | 01 | MUST | pass | FAIL |") || !strings.Contains(string(md), "## Conformance findings") {
		t.Errorf("the Markdown comparison lacks the table or the findings:\n%s", md)
	}
}

// TestConformanceUnreachable: a relay that cannot be reached is an error
// of the run (exit 1), said once, not checks left unknown.
func TestConformanceUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "ws://" + ln.Addr().String()
	ln.Close()
	out := t.TempDir()
	code, _, stderr := runHere(t, "conformance", "--relay", url, "--out", out, "--json", filepath.Join(out, "c.json"), "--no-progress", "--quiet")
	if code != judge.Error || !strings.Contains(stderr, "ERROR: dial "+url+": unreachable") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	f, err := results.Read(filepath.Join(out, "c.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Runs) != 1 || len(f.Runs[0].Conformance) != 0 || f.Verdict == nil || f.Verdict.Status != judge.Error {
		t.Errorf("results %+v, verdict %+v", f.Runs, f.Verdict)
	}
}

// TestConformanceAuth: behind a relay that requires NIP-42 AUTH (a gate
// that refuses every EVENT and REQ until the connection authenticates),
// --auth-key makes the checks answer the challenge: every NIP-01 check
// passes, exit 0, and every AUTH is by that key. Without a key the
// refusals stand: the checks that need a stored event or an open
// subscription are not run, naming auth-required, and none is unknown.
func TestConformanceAuth(t *testing.T) {
	integration(t)
	const skHex = "67dea2ed018072d675f5415ecfaed7d2597555e202d85b3d65ea4e58d2d92ffa"
	r := testrelay.Start(t, testrelay.Config{Verify: true})
	g := newAuthGate(t, r.URL(), false)
	res, f := runConformance(t, "--relay", g.url, "--auth-key", skHex)
	for _, c := range f.Runs[0].Conformance {
		if c.Status != results.CheckPass && c.Status != results.CheckNotAnnounced {
			t.Errorf("with --auth-key: %s: %s: %s\n  %s", c.ID, c.Status, c.Detail, strings.Join(c.Evidence, "\n  "))
		}
	}
	if res.code != judge.Passed {
		t.Errorf("with --auth-key: exit %d\n%s", res.code, lastLines(res.stdout+res.stderr, 30))
	}
	sk, _ := parseAuthKey(skHex)
	k, err := wire.NewAuthKeys(nil).Add(sk)
	if err != nil {
		t.Fatal(err)
	}
	if got, bad, _ := g.authKeys(); len(got) != 1 || got[k] == 0 || len(bad) > 0 {
		t.Errorf("authenticated with %v (invalid %q), want only %s", got, bad, k)
	}

	g = newAuthGate(t, r.URL(), false)
	_, f = runConformance(t, "--relay", g.url)
	for _, c := range f.Runs[0].Conformance {
		if c.Status == results.CheckNotAnnounced { // the gate serves no NIP-11: only NIP-01's checks run
			continue
		}
		switch c.ID {
		case "ephemeral.ok", "req.malformed-closed", "nip09.deletion", "nip40.expired-dropped":
			// an OK false and a CLOSED are what the first two check for
		default:
			if c.Status != results.CheckNotRun || !strings.Contains(c.Detail, "auth-required:") {
				t.Errorf("without a key: %s: %s: %s", c.ID, c.Status, c.Detail)
			}
		}
	}
	if got, _, _ := g.authKeys(); len(got) != 0 {
		t.Errorf("without a key, authenticated with %v", got)
	}
}

// TestCheckProgressLines: the line said as each check ends names its
// status as the table does ("not announced", never "not-announced") and
// every status starts in the same column, the longest check ID's included.
func TestCheckProgressLines(t *testing.T) {
	checks := conformance.Checks()
	col := -1
	for i, c := range checks {
		line := checkProgress(i, len(checks), results.Check{ID: c.ID, Status: results.CheckNotAnnounced, Millis: 3})
		at := strings.Index(line, " not announced (3 ms)")
		if at < 0 {
			t.Fatalf("%q: want the status as the table shows it (not announced)", line)
		}
		if col >= 0 && at != col {
			t.Errorf("%q: status at column %d, want %d as the others", line, at, col)
		}
		col = at
	}
}

// A round's tally names the statuses as the table does.
func TestTallyLineWords(t *testing.T) {
	got := tallyLine([]results.Check{{Status: results.CheckPass}, {Status: results.CheckNotAnnounced}, {Status: results.CheckNotRun}})
	if want := "1 pass, 1 not announced, 1 not run"; got != want {
		t.Errorf("tally %q, want %q", got, want)
	}
}
