package workload

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/relaybench/relaybench/internal/testrelay"
	"github.com/relaybench/relaybench/judge"
	"github.com/relaybench/relaybench/outcome"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/verify"
)

// publishAndQuery is the whole default benchmark against one URL.
func publishAndQuery(t *testing.T, url string, mode string, qo QueryOptions) (*PublishResult, results.Phase) {
	t.Helper()
	pr, model := publishSmall(t, url, mode)
	if qo.Queries == 0 {
		qo.Queries = 36
	}
	if qo.Timeout == 0 {
		qo.Timeout = 5 * time.Second
	}
	qo.Seed = 3
	ph, err := Query(testCtx(t), url, model, model.Live, qo)
	if err != nil {
		t.Fatalf("query: %v", err)
	}
	return pr, ph
}

func TestPublishAndQueryEmbeddedRelay(t *testing.T) {
	for _, mode := range []string{ModeWait, ModePipeline} {
		t.Run(mode, func(t *testing.T) {
			url := embeddedURL(t, "memory")
			pr, q := publishAndQuery(t, url, mode, QueryOptions{Limit: 50})
			c := smallCorpus(t)
			p := pr.Phase
			if p.Counts["sent"] != int64(len(c.Events)) || p.Counts["accepted"] != int64(len(c.Events)) {
				t.Fatalf("sent %d accepted %d of %d; refused %v; notes %v", p.Counts["sent"], p.Counts["accepted"], len(c.Events), p.Refused, p.Notes)
			}
			if h := p.Latency["ok"]; h.Count != int64(len(c.Events)) || h.Percentiles["50"] <= 0 {
				t.Fatalf("ok latency %+v", h)
			}
			if p.Rates["events_per_sec"] <= 0 || p.Duration <= 0 {
				t.Fatalf("rate %v duration %d", p.Rates, p.Duration)
			}
			v := q.Verification
			if !v.Verified || !v.Passed || v.Checked != 36 || v.Returned == 0 || v.Missing != 0 {
				t.Fatalf("verification %+v", v)
			}
			if q.Counts["queries"] != 36 || len(q.Groups) != len(Shapes) {
				t.Fatalf("queries %d groups %d", q.Counts["queries"], len(q.Groups))
			}
			for _, g := range q.Groups {
				if g.Counts["events_returned"] == 0 {
					t.Errorf("shape %s returned nothing: filters must match", g.Name)
				}
			}
		})
	}
}

func TestSilentDropsAreMissing(t *testing.T) {
	r := testrelay.Start(t, testrelay.Config{DropEvery: 7})
	pr, q := publishAndQuery(t, r.URL(), ModePipeline, QueryOptions{Limit: 500})
	if pr.Phase.Counts["accepted"] != int64(len(smallCorpus(t).Events)) {
		t.Fatalf("the relay said OK to all; accepted %d", pr.Phase.Counts["accepted"])
	}
	if q.Verification.Missing == 0 || q.Verification.Passed {
		t.Fatalf("silent drops not detected: %+v", q.Verification)
	}
}

func TestRefusalsClassifiedAndNotExpected(t *testing.T) {
	r := testrelay.Start(t, testrelay.Config{RefuseEvery: 4, RefuseReason: "rate-limited: slow down"})
	pr, q := publishAndQuery(t, r.URL(), ModeWait, QueryOptions{Limit: 500})
	n := int64(len(smallCorpus(t).Events))
	p := pr.Phase
	if p.Refused["rate-limited"] != n/4 || p.Counts["accepted"] != n-n/4 {
		t.Fatalf("refused %v accepted %d", p.Refused, p.Counts["accepted"])
	}
	if !strings.Contains(strings.Join(p.Notes, "\n"), "rate-limited: slow down") {
		t.Fatalf("reason text not reported: %v", p.Notes)
	}
	// The test relay does not implement replaceable events, so it may return
	// replaced ones (flagged as extra); refused events must never be expected.
	if v := q.Verification; v.Missing != 0 || strings.Contains(strings.Join(v.Notes, "\n"), "never published") {
		t.Fatalf("refused events must not be expected: %+v", v)
	}
}

func TestAnswersOutsideFilterAndInvalid(t *testing.T) {
	r := testrelay.Start(t, testrelay.Config{ExtraEvents: 2})
	_, q := publishAndQuery(t, r.URL(), ModePipeline, QueryOptions{})
	if q.Verification.NotMatching == 0 || q.Verification.Passed {
		t.Fatalf("events outside the filter not detected: %+v", q.Verification)
	}

	r2 := testrelay.Start(t, testrelay.Config{InvalidEvery: 5})
	_, q2 := publishAndQuery(t, r2.URL(), ModePipeline, QueryOptions{})
	if q2.Verification.Invalid == 0 || q2.Verification.Passed {
		t.Fatalf("invalid events not detected: %+v", q2.Verification)
	}
}

func TestNoEOSEIsAFailureNotAHang(t *testing.T) {
	r := testrelay.Start(t, testrelay.Config{NoEOSE: true})
	start := time.Now()
	_, q := publishAndQuery(t, r.URL(), ModePipeline, QueryOptions{Base: Base{Timeout: 300 * time.Millisecond}, Queries: 6})
	// Three queries in a row without EOSE stop the phase; the rest is not
	// run. Unanswered queries are incomplete work, not wrong answers.
	a := q.Account(results.OpQuery)
	if a == nil || !a.Balanced() || a.TimedOut != 3 || a.NotRunBy[outcome.WhyAborted] != 3 || q.Counts["queries"] != 0 || q.Aborted == "" {
		t.Fatalf("account %+v counts %v aborted %q", a, q.Counts, q.Aborted)
	}
	// No answer is not a wrong answer, nor a checked one.
	if v := q.Verification; v.Status() != results.VerificationNotVerified || v.Missing+v.Extra+v.Invalid+v.NotMatching != 0 {
		t.Fatalf("want not verified, nothing wrong: %+v", q.Verification)
	}
	if time.Since(start) > 30*time.Second {
		t.Fatal("took far longer than the timeouts allow")
	}
}

func TestDelayedOKsShowInLatency(t *testing.T) {
	r := testrelay.Start(t, testrelay.Config{OKDelay: 40 * time.Millisecond})
	p := publishFirst(t, r.URL(), 40, PublishOptions{Base: Base{Timeout: 5 * time.Second}, Connections: 4, Mode: ModeWait})
	if p50 := p.Latency["ok"].Percentiles["50"]; p50 < int64(40*time.Millisecond) {
		t.Fatalf("OK p50 %v below the relay's 40ms delay", time.Duration(p50))
	}
}

func TestNeverOKTimesOut(t *testing.T) {
	r := testrelay.Start(t, testrelay.Config{NeverOK: true})
	for _, mode := range []string{ModeWait, ModePipeline} {
		p := publishFirst(t, r.URL(), 20, PublishOptions{Base: Base{Timeout: 300 * time.Millisecond}, Connections: 2, Mode: mode})
		// The phase stops early (a few timeouts in a row, nothing answered)
		// instead of waiting timeout × events; the rest is not run, and the
		// account says so.
		a := p.Account(results.OpEvent)
		if a == nil || !a.Balanced() || a.Requested != 20 || a.Accepted != 0 || a.TimedOut == 0 ||
			a.TimedOut+a.NotRun != 20 || a.NotRunBy[outcome.WhyAborted] != a.NotRun {
			t.Fatalf("%s: account %+v", mode, a)
		}
		if p.Aborted == "" || a.TimedOut > 20 {
			t.Fatalf("%s: not stopped early: %q %+v", mode, p.Aborted, a)
		}
	}
}

func TestGarbageFramesCounted(t *testing.T) {
	r := testrelay.Start(t, testrelay.Config{GarbageEvery: 3})
	p := publishFirst(t, r.URL(), 60, PublishOptions{Base: Base{Timeout: 5 * time.Second}, Connections: 2, Mode: ModePipeline})
	if p.Counts["malformed_frames"] == 0 || len(p.Errors) == 0 {
		t.Fatalf("garbage not reported: counts %v errors %v", p.Counts, p.Errors)
	}
	if p.Counts["accepted"] != 60 {
		t.Fatalf("real OKs among garbage must still count: %v", p.Counts)
	}
}

func TestConnectionDropsReported(t *testing.T) {
	r := testrelay.Start(t, testrelay.Config{CloseAfter: 25})
	for _, mode := range []string{ModeWait, ModePipeline} {
		p := publishFirst(t, r.URL(), 200, PublishOptions{Base: Base{Timeout: 2 * time.Second}, Connections: 2, Mode: mode})
		lost := p.Counts["failed"] + p.Counts["not_sent"] + p.Counts["timed_out"]
		if p.Counts["accepted"] >= 200 || lost == 0 || len(p.Errors) == 0 {
			t.Fatalf("%s: dropped connections not reported: counts %v errors %v", mode, p.Counts, p.Errors)
		}
		if p.Counts["accepted"]+lost+p.Counts["refused"] != 200 {
			t.Fatalf("%s: every event must be accounted for: %v", mode, p.Counts)
		}
	}
}

func TestUnreachableRelayFailsFast(t *testing.T) {
	c := smallCorpus(t)
	_, err := Publish(testCtx(t), "ws://127.0.0.1:1", c, all(c)[:5], PublishOptions{Connections: 1})
	if err == nil || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Fatalf("want a dial error naming the relay, got %v", err)
	}
}

// Publishing the same events twice: the relay answers "duplicate:" and the
// second round's queries still expect every event.
func TestDuplicatesStayExpected(t *testing.T) {
	url := embeddedURL(t, "memory")
	c := smallCorpus(t)
	if _, err := Publish(testCtx(t), url, c, all(c), PublishOptions{Connections: 2}); err != nil {
		t.Fatal(err)
	}
	pr, q := publishAndQuery(t, url, ModeWait, QueryOptions{Limit: 50})
	// The embedded relay answers a duplicate as NIP-01's example does,
	// ["OK", id, true, "duplicate: …"]: every event is accepted again.
	if pr.Phase.Counts["accepted"] != int64(len(c.Events)) || len(pr.Phase.Refused) != 0 {
		t.Fatalf("second publish: accepted %d of %d, refused %v", pr.Phase.Counts["accepted"], len(c.Events), pr.Phase.Refused)
	}
	if !q.Verification.Passed || q.Verification.Returned == 0 {
		t.Fatalf("duplicates must stay expected: %+v", q.Verification)
	}
}

// Every shape, the reference's and the clients', can be drawn from the
// synthetic corpus and hits; the client shapes have the size the issue
// asks for; no filter names an id or an author twice.
func TestShapesMatchSomething(t *testing.T) {
	c := smallCorpus(t).Events
	b, err := newShapeBuilder(c, 100, 1)
	if err != nil {
		t.Fatal(err)
	}
	m := verify.NewModel(c)
	for _, s := range append(slices.Clone(Shapes), ClientShapes...) {
		if why := b.unavailable(s); why != "" {
			t.Fatalf("shape %s unavailable: %s", s, why)
		}
		for range 20 {
			f, ok := b.build(s)
			if !ok {
				t.Fatalf("shape %s could not be built", s)
			}
			if _, all := m.Expected(&f, 0); len(all) == 0 {
				t.Fatalf("shape %s filter %s matches nothing", s, f.AppendJSON(nil))
			}
			checkClientShape(t, s, f)
			for _, vs := range [][]string{f.IDs, f.Authors} {
				seen := map[string]bool{}
				for _, v := range vs {
					if seen[v] {
						t.Fatalf("%s: %s twice in %s", s, v, f.AppendJSON(nil))
					}
					seen[v] = true
				}
			}
		}
	}
}

// OKs for ids never sent are a NIP-01 violation (exit 3), never credited
// and never taken for late OKs.
func TestForeignOKsAreAViolation(t *testing.T) {
	for _, mode := range []string{ModeWait, ModePipeline} {
		t.Run(mode, func(t *testing.T) {
			r := testrelay.Start(t, testrelay.Config{ForeignOKEvery: 3})
			p := publishFirst(t, r.URL(), 60, PublishOptions{Base: Base{Timeout: 5 * time.Second}, Connections: 2, Mode: mode})
			// Each connection reads every foreign OK sent before its last real one.
			if p.Counts["foreign_oks"] == 0 || p.Counts["late_oks"] != 0 || p.Counts["accepted"] != 60 {
				t.Fatalf("counts %v (relay sent %d foreign OKs)", p.Counts, r.Stats().ForeignOKs)
			}
			if v := phaseVerdict(p, false); v.Status != judge.WrongAnswers || !reasonsMention(v, "never sent") {
				t.Errorf("verdict %+v, want wrong answers naming OKs for events never sent", v)
			}
		})
	}
}

// OKs that come after their events timed out are late, never foreign,
// however the timing falls (they may also beat the expiry and be accepted).
func TestLateOKsAreNotAViolation(t *testing.T) {
	r := testrelay.Start(t, testrelay.Config{OKDelay: 60 * time.Millisecond})
	p := publishFirst(t, r.URL(), 8, PublishOptions{Base: Base{Timeout: 40 * time.Millisecond}, Connections: 1, Mode: ModeWait})
	if p.Counts["foreign_oks"] != 0 || p.Counts["late_oks"] > p.Counts["timed_out"] {
		t.Fatalf("counts %v: a late OK is never foreign, and each belongs to a timed-out event", p.Counts)
	}
	if v := phaseVerdict(p, false); v.Status == judge.WrongAnswers {
		t.Errorf("verdict %+v: late OKs are no violation", v)
	}
}

// EVENTs under a subscription id never opened are a NIP-01 violation in
// the publish and the query phase alike; events after a CLOSE are only
// named, and neither reaches an answer.
func TestUnsolicitedEventsAreAViolation(t *testing.T) {
	r := testrelay.Start(t, testrelay.Config{UnsolicitedEvents: true})
	pr, q := publishAndQuery(t, r.URL(), ModePipeline, QueryOptions{Limit: 50, Queries: 10})
	p := pr.Phase
	if p.Counts["unsolicited_events"] == 0 {
		t.Errorf("publish phase: counts %v (relay sent %d unsolicited events)", p.Counts, r.Stats().UnsolicitedEvents)
	}
	if q.Counts["unsolicited_events"] == 0 || q.Counts["events_after_close"] == 0 {
		t.Errorf("query phase: counts %v", q.Counts)
	}
	if v := q.Verification; v == nil || !v.Passed || v.Checked != 10 {
		t.Errorf("verification %+v: the stray events must not reach any answer", v)
	}
	for _, ph := range []results.Phase{p, q} {
		if v := phaseVerdict(ph, false); v.Status != judge.WrongAnswers || !reasonsMention(v, "never opened") {
			t.Errorf("%s: verdict %+v, want wrong answers naming EVENTs under ids never opened", ph.Name, v)
		}
	}
}

// A relay that streams events into every REQ without end is cut at the
// cap: each query is refused "answer over cap", none is verified (neither
// passed nor wrong), and the phase is incomplete, not failed.
func TestEndlessAnswersAreCutAtTheCap(t *testing.T) {
	r := testrelay.Start(t, testrelay.Config{EndlessAnswers: true})
	_, q := publishAndQuery(t, r.URL(), ModePipeline, QueryOptions{Limit: 10, Queries: 6})
	a := q.Account(results.OpQuery)
	if a == nil || a.Refused != 6 || a.RefusedBy[outcome.OverCap] != 6 || !a.Balanced() {
		t.Fatalf("account %+v, want 6 refused %q", a, outcome.OverCap)
	}
	if q.Counts["answers_over_cap"] != 6 || q.Counts["events_returned"] != 0 {
		t.Errorf("counts %v", q.Counts)
	}
	if v := q.Verification; v != nil && (v.Checked != 0 || v.Missing != 0 || v.Extra != 0) {
		t.Errorf("verification %+v: nothing over the cap is verified", v)
	}
	v := phaseVerdict(q, false)
	if v.Status != judge.Incomplete || !reasonsMention(v, outcome.OverCap) {
		t.Errorf("verdict %+v, want incomplete naming %q", v, outcome.OverCap)
	}
}

// publishFirst publishes the small corpus' first n events to url with o
// and returns the phase.
func publishFirst(t *testing.T, url string, n int, o PublishOptions) results.Phase {
	t.Helper()
	c := smallCorpus(t)
	pr, err := Publish(testCtx(t), url, c, all(c)[:n], o)
	if err != nil {
		t.Fatal(err)
	}
	return pr.Phase
}
