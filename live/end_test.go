package live

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/relaybench/relaybench/outcome"
	"github.com/relaybench/relaybench/results"
)

// finishedFile is a results file of one run of relay hostile.
func finishedFile() *results.File {
	return &results.File{Runs: []results.Run{{Relay: results.Relay{URL: "ws://127.0.0.1:1", Name: hostile},
		Phases: []results.Phase{latencyPhase("publish", 1e6)}}}}
}

// TestLastMessageCarriesTheReport: a page following the run gets, in the
// message that says it finished, the HTML report itself, and its stream
// ends after it; Drain returns once every page has it, so that Close, which
// follows at once (no --web-keep), cuts nothing off and the page needs
// nothing more from the server (its /report stops with it).
func TestLastMessageCarriesTheReport(t *testing.T) {
	st, srv := serveRun(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // hang guard
	defer cancel()
	_, br := follow(t, ctx, srv)
	if m := readEvent(t, br); m.Finished || m.Report != "" {
		t.Fatalf("first event: finished %v, report %d bytes", m.Finished, len(m.Report))
	}
	st.Finish(finishedFile())
	drainAndClose(t, ctx, srv)
	var last message
	for {
		m := readEvent(t, br)
		if m.Finished {
			last = m
			break
		}
	}
	if !strings.HasPrefix(last.Report, "<!DOCTYPE html>") || strings.Contains(last.Report, "<img src=x") {
		t.Fatalf("the last message's report: not the HTML report, or the relay's markup unescaped: %.200q", last.Report)
	}
	if _, err := br.ReadByte(); !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("after the last message: %v, want the stream's end", err)
	}
}

// TestProgressEndsWithItsPhase: once the phase in flight ended, /metrics
// no longer shows its step as current (a mixed run showed its preload's
// "Publishing 10,000 events" all through the mixed phase, which reports
// no progress count).
func TestProgressEndsWithItsPhase(t *testing.T) {
	st := New(Options{Run: "r"})
	defer st.Close()
	st.Progress("Publishing 10 events", 10)(10)
	if !strings.Contains(string(st.Exposition()), `step="Publishing 10 events"`) {
		t.Fatalf("the phase in flight is not shown:\n%s", st.Exposition())
	}
	st.PhaseDone(latencyPhase("publish", 1e6))
	if e := string(st.Exposition()); strings.Contains(e, "relaybench_phase_done") {
		t.Fatalf("the finished phase is still shown as current:\n%s", e)
	}
}

// TestPageKeepsTheReportAfterTheServerStopped: a page open through the run
// shows the report after the server stopped (no --web-keep), and its chart
// axes have round ticks.
func TestPageKeepsTheReportAfterTheServerStopped(t *testing.T) {
	bin := chromiumBin()
	if bin == "" {
		t.Skip("skipping: no chromium (apt-get install chromium)")
	}
	st, srv := serveRun(t)
	br := openBrowser(t, bin, srv.URL())
	deadline := time.Now().Add(time.Minute) // hang guard
	for srv.streams.Load() == 0 {           // the page follows the run
		if time.Now().After(deadline) {
			t.Fatal("the page never opened its event stream")
		}
		time.Sleep(50 * time.Millisecond)
	}
	st.Finish(finishedFile())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	drainAndClose(t, ctx, srv)
	var got struct {
		Status string `json:"status"`
		Doc    string `json:"doc"`
		Src    string `json:"src"`
	}
	for {
		br.eval(t, `(() => { const f = document.getElementById("reportframe");
  return {status: document.getElementById("status").textContent, doc: f ? f.srcdoc : "", src: f ? f.getAttribute("src") || "" : ""}; })()`, &got)
		if got.Status == "finished" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the page never showed the end: %+v", got)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.HasPrefix(got.Doc, "<!DOCTYPE html>") || got.Src != "" {
		t.Fatalf("the page's report frame: srcdoc %.100q, src %q; want the report itself, nothing asked of the stopped server", got.Doc, got.Src)
	}
	// The frame draws the report: its document is laid out with the
	// verdict in it, and still runs no script (sandboxed).
	var drawn struct {
		Height  float64 `json:"height"`
		Verdict bool    `json:"verdict"`
		Sandbox string  `json:"sandbox"`
	}
	for {
		br.eval(t, `(() => { const f = document.getElementById("reportframe"); const d = f.contentDocument;
  return {height: d && d.body ? d.body.getBoundingClientRect().height : 0, verdict: !!(d && d.body && /PASSED|FAILED|INCOMPLETE|ERROR/.test(d.body.innerText)), sandbox: f.getAttribute("sandbox")}; })()`, &drawn)
		if drawn.Height > 100 && drawn.Verdict {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the report frame is not drawn: %+v", drawn)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if strings.Contains(drawn.Sandbox, "allow-scripts") {
		t.Errorf("report frame sandbox %q: no script may run in it", drawn.Sandbox)
	}
	var labels []string
	br.eval(t, `ticks(8816.6).labels`, &labels)
	if strings.Join(labels, " ") != "0 2,500 5,000 7,500 10,000" {
		t.Errorf("axis ticks for 8,816.6: %q, want 0 2,500 5,000 7,500 10,000", labels)
	}
}

// TestPhaseWithoutProgressShows: a workload that announces no progress of
// its own (mixed after its preload: the page showed "—" and an empty bar
// while the counters moved) is the phase in flight as soon as it measures:
// under the command's name, or the workload's when the runner names it,
// with the operations its ledgers ended of those requested, on the
// page and in /metrics; between phases, none.
func TestPhaseWithoutProgressShows(t *testing.T) {
	st := New(Options{Run: "r", Command: "mixed"})
	defer st.Close()
	st.Progress("Publishing 10 events", 10)(10)
	st.PhaseDone(latencyPhase("preload", 1e6))
	st.Tick()
	if p := st.History()[0]; p.Phase != "" || p.Total != 0 {
		t.Fatalf("between phases: %+v, want no phase", p)
	}
	l := outcome.New(results.OpEvent, 100)
	st.Tick()
	if p := last(st); p.Phase != "mixed" || p.Done != 0 || p.Total != 100 || p.Of != ofRequested {
		t.Fatalf("a phase without progress as it starts: phase %q %d/%d %q, want mixed 0/100 %q", p.Phase, p.Done, p.Total, p.Of, ofRequested)
	}
	l.AddN(outcome.Accepted, "", 30)
	l.AddN(outcome.TimedOut, "", 2)
	st.Tick()
	if p := last(st); p.Phase != "mixed" || p.Done != 32 || p.Total != 100 {
		t.Fatalf("a phase without progress: %q %d/%d, want mixed 32/100", p.Phase, p.Done, p.Total)
	}
	ss := parseExposition(t, string(st.Exposition()))
	step := map[string]string{"phase": "current", "step": "mixed"}
	if d, ok := find(t, ss, "relaybench_phase_done", step); !ok || d != 32 {
		t.Errorf("relaybench_phase_done{step=mixed} = %v (%v), want 32", d, ok)
	}
	if p, ok := find(t, ss, "relaybench_phase_planned", step); !ok || p != 100 {
		t.Errorf("relaybench_phase_planned{step=mixed} = %v (%v), want 100", p, ok)
	}
	st.Workload("load")
	st.Tick()
	if p := last(st); p.Phase != "load" || p.Done != 32 {
		t.Errorf("a workload the runner named: %q %d, want load 32", p.Phase, p.Done)
	}
	st.Progress("Querying", 5)(4)
	st.Tick()
	if p := last(st); p.Phase != "Querying" || p.Done != 4 || p.Total != 5 || p.Of != "" {
		t.Errorf("a phase announcing its progress: %+v", p)
	}
	st.PhaseDone(latencyPhase("mixed", 1e6))
	st.Tick()
	if p := last(st); p.Phase != "" {
		t.Errorf("after its end: phase %q, want none", p.Phase)
	}
}

func last(st *State) Point { h := st.History(); return h[len(h)-1] }

// TestPageShowsThePhaseAndTheEnd: in Chromium, the page shows a phase that
// announces no progress of its own with its operations and a bar as it
// measures; memory in MiB, as every other output; and at the end the final
// state of verification: "none found" when a phase checked answers, "not
// verified" when none did, never "none so far".
func TestPageShowsThePhaseAndTheEnd(t *testing.T) {
	bin := chromiumBin()
	if bin == "" {
		t.Skip("skipping: no chromium (apt-get install chromium)")
	}
	st, srv := serveRunOf(t, Options{Run: "r", Command: "mixed"})
	l := outcome.New(results.OpEvent, 200)
	l.AddN(outcome.Accepted, "", 50)
	st.Tick()
	br := openBrowser(t, bin, srv.URL())
	type shown struct {
		Phase    string `json:"phase"`
		Progress string `json:"progress"`
		Bar      string `json:"bar"`
		Found    string `json:"found"`
		Failures string `json:"failures"`
		Memory   string `json:"memory"`
		Status   string `json:"status"`
	}
	// loading until the page's script has run (every element is parsed before it)
	const read = `(() => { if (!document.getElementById("status") || typeof showPoint !== "function") return {status: "loading"};
  const t = id => document.getElementById(id).textContent;
  return {phase: t("phase"), progress: t("progress"), bar: document.getElementById("progressbar").style.width,
    found: t("found"), failures: t("failures"), status: t("status"),
    memory: document.getElementById("c-rss").nextElementSibling.textContent}; })()`
	var got shown
	deadline := time.Now().Add(time.Minute) // hang guard
	for br.eval(t, read, &got); got.Status != "running"; br.eval(t, read, &got) {
		if time.Now().After(deadline) {
			t.Fatalf("the page never showed the run: %+v", got)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got.Phase != "mixed" || got.Progress != "50 / 200 "+ofRequested || got.Bar != "25%" {
		t.Errorf("phase in flight shown as %q %q, bar %q; want mixed, 50 / 200 %s, 25%%", got.Phase, got.Progress, got.Bar, ofRequested)
	}
	if got.Found != "none so far" || !strings.Contains(got.Memory, "MiB") || strings.Contains(got.Memory, " MB") {
		t.Errorf("while running: found %q, memory caption %q (want MiB)", got.Found, got.Memory)
	}
	var finished string // no finished phase yet: said, not a table of headers only
	if br.eval(t, `document.getElementById("phases").textContent`, &finished); finished != "none yet" {
		t.Errorf("finished phases while the first runs: %q, want none yet", finished)
	}
	f := finishedFile()
	f.Runs[0].Phases[0].Verification = &results.Verification{Verified: true, Checked: 5, Passed: true, State: results.VerificationPassed}
	f.Runs[0].Phases = append(f.Runs[0].Phases, results.NewPhase("burst", "burst"))
	st.Finish(f)
	for br.eval(t, read, &got); got.Status != "finished"; br.eval(t, read, &got) {
		if time.Now().After(deadline) {
			t.Fatalf("the page never showed the end: %+v", got)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got.Found != "none found" || got.Failures != "none: 1 phase passed verification, 1 had nothing to verify (burst)" {
		t.Errorf("after a verified run: found %q, failures %q", got.Found, got.Failures)
	}
	// A run in which no phase checked an answer is not verified, not clean.
	var unverified shown
	br.eval(t, `(() => { const v = verified([{verification: "not verified"}, {}]); showFound({}, [], v); showFailures([], v);
  return {found: document.getElementById("found").textContent, failures: document.getElementById("failures").textContent}; })()`, &unverified)
	if !strings.HasPrefix(unverified.Found, "not verified") || !strings.HasPrefix(unverified.Failures, "not verified") {
		t.Errorf("after a run nothing verified: found %q, failures %q", unverified.Found, unverified.Failures)
	}
	// Phases with no verification (a publish: its OKs are its check) have
	// nothing to verify: never "not verified", which is exit 4 elsewhere.
	var nothing shown
	br.eval(t, `(() => { const v = verified([{name: "publish"}, {name: "burst"}]); showFound({}, [], v); showFailures([], v);
  return {found: document.getElementById("found").textContent, failures: document.getElementById("failures").textContent}; })()`, &nothing)
	if nothing.Found != "nothing to verify" || nothing.Failures != "none: all 2 phases had nothing to verify (publish, burst)" {
		t.Errorf("after a run with nothing to verify: found %q, failures %q", nothing.Found, nothing.Failures)
	}
	br.eval(t, `(() => { const v = verified([{name: "publish"}]); showFailures([], v); return document.getElementById("failures").textContent; })()`, &nothing.Failures)
	if nothing.Failures != "none: the one phase had nothing to verify (publish)" {
		t.Errorf("after a run of one phase with nothing to verify: failures %q", nothing.Failures)
	}
	// A phase of several kinds of operation (mixed) shows a row per kind:
	// a walk read "mixed requested 10,600 / accepted 10,600", EVENTs and
	// REQs added into one figure.
	var rows [][]string
	br.eval(t, `(() => { showPhases([{name: "mixed", relay: "r", requested: 10600, outcomes: {accepted: 10600}, verification: "passed",
    ops: [{op: "events", requested: 10000, outcomes: {accepted: 10000}}, {op: "queries", requested: 500, outcomes: {accepted: 490, timed_out: 10}}, {op: "read-backs", requested: 100, outcomes: {accepted: 100}}]},
    {name: "publish", relay: "r", requested: 5, outcomes: {accepted: 5}}]);
  return [...document.querySelectorAll("#phases tr")].map(tr => [...tr.children].map(td => td.textContent)); })()`, &rows)
	if len(rows) != 4 || strings.Join(rows[0][:3], "|") != "mixed · events|10,000|10,000" || strings.Join(rows[1][:5], "|") != "mixed · queries|500|490|0|10" ||
		len(rows[2]) != 9 || rows[2][0] != "mixed · read-backs" || rows[2][8] != "passed" || strings.Join(rows[3][:3], "|") != "publish|5|5" {
		t.Errorf("phase rows %q, want mixed's events, queries and read-backs apart, then publish", rows)
	}
	// The p99 card says what it shows as the rate cards do: the last
	// second's, labelled so.
	var p99 string
	br.eval(t, `(() => { showPoint({rate: 1, avg_rate: 1, lat: [{of: "OK", p99_ms: 4.5}, {of: "EOSE", p99_ms: 13.4}, {of: "delivery", p99_ms: 6}, {of: "x", p99_ms: 1250.4}]}, 1);
  const c = document.getElementById("p99"); return c.textContent + " | " + c.nextElementSibling.textContent; })()`, &p99)
	// three significant digits each (a walk read "OK 4.9 · EOSE 6")
	if p99 != "OK 4.50 · EOSE 13.4 · delivery 6.00 · x 1,250 | p99 latency, ms (last second)" {
		t.Errorf("p99 card %q, want its figures and 'p99 latency, ms (last second)'", p99)
	}
	// The whole-run card shows the whole run's average; the last second
	// has its own card, labelled as such.
	var rates struct {
		Avg  string `json:"avg"`
		Last string `json:"last"`
	}
	br.eval(t, `(() => { showPoint({rate: 49, avg_rate: 1080.4, lat: []}, 1); const t = id => document.getElementById(id);
  return {avg: t("rate").textContent + " " + t("rate").nextElementSibling.textContent,
    last: t("rate_last").textContent + " " + t("rate_last").nextElementSibling.textContent}; })()`, &rates)
	if rates.Avg != "1,080 accepted / s (whole-run average)" || rates.Last != "49 accepted / s (last second)" {
		t.Errorf("rate cards %q and %q, want the whole-run average and the last second, each labelled", rates.Avg, rates.Last)
	}
	// Once finished (a page opened after the end too), the cards show the
	// last point's, not the 0 they start with.
	br.eval(t, `(() => { history.push({rate: 7, avg_rate: 1234}); onMessage({data: JSON.stringify({finished: true, phases: []})});
  const t = id => document.getElementById(id).textContent; return {avg: t("rate"), last: t("rate_last")}; })()`, &rates)
	if rates.Avg != "1,234" || rates.Last != "7" {
		t.Errorf("finished page: rate cards %q and %q, want the last point's 1,234 and 7", rates.Avg, rates.Last)
	}
}

// TestWorkloadInPartsSaysSo: mixed announces its three parts' operations
// before the first starts (where each part booked its own as it started,
// so the total went 800, 880, 1,760 and the bar read 94% with the whole
// "together" part to come): the bar and the planned total are the plan's
// from the start, the words claim no "parts begun so far" and say which
// part is under way (Part); the next workload starts without one.
func TestWorkloadInPartsSaysSo(t *testing.T) {
	st := New(Options{Run: "r", Command: "mixed"})
	defer st.Close()
	st.Workload("mixed")
	plan := st.Progress("mixed: 1,760 operations in three parts of 10s each", 1760)
	st.Part("publish/alone (10s)")
	l := outcome.New(results.OpEvent, 800)
	l.AddN(outcome.Accepted, "", 800)
	st.Part("query/alone (10s)")
	outcome.New(results.OpQuery, 80).AddN(outcome.Accepted, "", 31)
	plan(831)
	st.Tick()
	p := last(st)
	if p.Phase != "mixed: 1,760 operations in three parts of 10s each" || p.Done != 831 || p.Total != 1760 || p.Of != "now: query/alone (10s)" {
		t.Fatalf("a workload in parts: %q %d/%d %q; want its plan, 831/1760, now query/alone", p.Phase, p.Done, p.Total, p.Of)
	}
	if m := string(st.Exposition()); !strings.Contains(m, `step="mixed: 1,760 operations in three parts of 10s each"} 1760`) || strings.Contains(m, "begun so far") {
		t.Errorf("relaybench_phase_planned is not the plan's:\n%s", m)
	}
	st.PhaseDone()
	st.Workload("load")
	st.Tick()
	if p := last(st); p.Of != ofRequested {
		t.Errorf("the next workload kept the part: %q", p.Of)
	}
}
