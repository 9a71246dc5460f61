package live

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

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
	if !srv.Drain(ctx) {
		t.Fatal("Drain: the page's stream did not end")
	}
	cctx, ccancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer ccancel()
	if err := srv.Close(cctx); err != nil {
		t.Fatalf("close: %v", err)
	}
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
	if !srv.Drain(ctx) {
		t.Fatal("Drain: the page's stream did not end")
	}
	if err := srv.Close(ctx); err != nil {
		t.Fatalf("close: %v", err)
	}
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
