package workload

import (
	"context"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/relaybench/relaybench/corpus"
	"github.com/relaybench/relaybench/internal/testrelay"
	"github.com/relaybench/relaybench/nostr"
	"github.com/relaybench/relaybench/outcome"
	"github.com/relaybench/relaybench/relay/embedded"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/verify"
)

var (
	corpusOnce sync.Once
	testCorpus *corpus.Corpus
	corpusErr  error
)

// smallCorpus is a 600-event corpus shared by the tests (signed once).
func smallCorpus(t *testing.T) *corpus.Corpus {
	t.Helper()
	corpusOnce.Do(func() {
		// A fixed window: the same events every run, so real relays' answers
		// do not change with the hour the tests run.
		anchor := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC).Unix()
		p := corpus.Params{Seed: 7, Events: 600, Authors: 40, AvgSize: 300, Spread: corpus.DefaultSpread, Anchor: anchor}.WithDefaults()
		testCorpus, corpusErr = corpus.Generate(context.Background(), p, corpus.Options{CacheDir: "off"})
	})
	if corpusErr != nil {
		t.Fatal(corpusErr)
	}
	return testCorpus
}

func all(c *corpus.Corpus) []int {
	idx := make([]int, len(c.Events))
	for i := range idx {
		idx[i] = i
	}
	return idx
}

func embeddedURL(t *testing.T, store string) string {
	t.Helper()
	r, err := embedded.New(embedded.Options{Store: store, DataDir: t.TempDir(), Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(r.Handler())
	t.Cleanup(func() { srv.Close(); r.Close() })
	return "ws" + strings.TrimPrefix(srv.URL, "http")
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// publishAndQuery is the whole default benchmark against one URL.
func publishAndQuery(t *testing.T, url string, mode string, qo QueryOptions) (*PublishResult, results.Phase) {
	t.Helper()
	c := smallCorpus(t)
	pr, err := Publish(ctxT(t), url, c, all(c), PublishOptions{Base: Base{Timeout: 5 * time.Second}, Connections: 4, Mode: mode, Window: 16})
	if err != nil {
		t.Fatalf("publish: %v", err)
	}
	var acc []*nostr.Event
	for _, i := range pr.StoredIndexes() {
		acc = append(acc, c.Events[i])
	}
	model := verify.NewModel(acc)
	if qo.Queries == 0 {
		qo.Queries = 36
	}
	if qo.Timeout == 0 {
		qo.Timeout = 5 * time.Second
	}
	qo.Seed = 3
	ph, err := Query(ctxT(t), url, model, model.Live, qo)
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
	r := testrelay.New(testrelay.Config{DropEvery: 7})
	defer r.Close()
	pr, q := publishAndQuery(t, r.URL(), ModePipeline, QueryOptions{Limit: 500})
	if pr.Phase.Counts["accepted"] != int64(len(smallCorpus(t).Events)) {
		t.Fatalf("the relay said OK to all; accepted %d", pr.Phase.Counts["accepted"])
	}
	if q.Verification.Missing == 0 || q.Verification.Passed {
		t.Fatalf("silent drops not detected: %+v", q.Verification)
	}
}

func TestRefusalsClassifiedAndNotExpected(t *testing.T) {
	r := testrelay.New(testrelay.Config{RefuseEvery: 4, RefuseReason: "rate-limited: slow down"})
	defer r.Close()
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
	r := testrelay.New(testrelay.Config{ExtraEvents: 2})
	defer r.Close()
	_, q := publishAndQuery(t, r.URL(), ModePipeline, QueryOptions{})
	if q.Verification.NotMatching == 0 || q.Verification.Passed {
		t.Fatalf("events outside the filter not detected: %+v", q.Verification)
	}

	r2 := testrelay.New(testrelay.Config{InvalidEvery: 5})
	defer r2.Close()
	_, q2 := publishAndQuery(t, r2.URL(), ModePipeline, QueryOptions{})
	if q2.Verification.Invalid == 0 || q2.Verification.Passed {
		t.Fatalf("invalid events not detected: %+v", q2.Verification)
	}
}

func TestNoEOSEIsAFailureNotAHang(t *testing.T) {
	r := testrelay.New(testrelay.Config{NoEOSE: true})
	defer r.Close()
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
	r := testrelay.New(testrelay.Config{OKDelay: 40 * time.Millisecond})
	defer r.Close()
	c := smallCorpus(t)
	pr, err := Publish(ctxT(t), r.URL(), c, all(c)[:40], PublishOptions{Base: Base{Timeout: 5 * time.Second}, Connections: 4, Mode: ModeWait})
	if err != nil {
		t.Fatal(err)
	}
	if p50 := pr.Phase.Latency["ok"].Percentiles["50"]; p50 < int64(40*time.Millisecond) {
		t.Fatalf("OK p50 %v below the relay's 40ms delay", time.Duration(p50))
	}
}

func TestNeverOKTimesOut(t *testing.T) {
	r := testrelay.New(testrelay.Config{NeverOK: true})
	defer r.Close()
	c := smallCorpus(t)
	for _, mode := range []string{ModeWait, ModePipeline} {
		pr, err := Publish(ctxT(t), r.URL(), c, all(c)[:20], PublishOptions{Base: Base{Timeout: 300 * time.Millisecond}, Connections: 2, Mode: mode})
		if err != nil {
			t.Fatal(err)
		}
		// The phase stops early (a few timeouts in a row, nothing answered)
		// instead of waiting timeout × events; the rest is not run, and the
		// account says so.
		a := pr.Phase.Account(results.OpEvent)
		if a == nil || !a.Balanced() || a.Requested != 20 || a.Accepted != 0 || a.TimedOut == 0 ||
			a.TimedOut+a.NotRun != 20 || a.NotRunBy[outcome.WhyAborted] != a.NotRun {
			t.Fatalf("%s: account %+v", mode, a)
		}
		if pr.Phase.Aborted == "" || a.TimedOut > 20 {
			t.Fatalf("%s: not stopped early: %q %+v", mode, pr.Phase.Aborted, a)
		}
	}
}

func TestGarbageFramesCounted(t *testing.T) {
	r := testrelay.New(testrelay.Config{GarbageEvery: 3})
	defer r.Close()
	c := smallCorpus(t)
	pr, err := Publish(ctxT(t), r.URL(), c, all(c)[:60], PublishOptions{Base: Base{Timeout: 5 * time.Second}, Connections: 2, Mode: ModePipeline})
	if err != nil {
		t.Fatal(err)
	}
	p := pr.Phase
	if p.Counts["malformed_frames"] == 0 || len(p.Errors) == 0 {
		t.Fatalf("garbage not reported: counts %v errors %v", p.Counts, p.Errors)
	}
	if p.Counts["accepted"] != 60 {
		t.Fatalf("real OKs among garbage must still count: %v", p.Counts)
	}
}

func TestConnectionDropsReported(t *testing.T) {
	r := testrelay.New(testrelay.Config{CloseAfter: 25})
	defer r.Close()
	c := smallCorpus(t)
	for _, mode := range []string{ModeWait, ModePipeline} {
		pr, err := Publish(ctxT(t), r.URL(), c, all(c)[:200], PublishOptions{Base: Base{Timeout: 2 * time.Second}, Connections: 2, Mode: mode})
		if err != nil {
			t.Fatal(err)
		}
		p := pr.Phase
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
	_, err := Publish(ctxT(t), "ws://127.0.0.1:1", c, all(c)[:5], PublishOptions{Connections: 1})
	if err == nil || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Fatalf("want a dial error naming the relay, got %v", err)
	}
}

func smallCorpusForShapes(t *testing.T) []*nostr.Event { return smallCorpus(t).Events }

// Publishing the same events twice: the relay answers "duplicate:" and the
// second round's queries still expect every event.
func TestDuplicatesStayExpected(t *testing.T) {
	url := embeddedURL(t, "memory")
	c := smallCorpus(t)
	if _, err := Publish(ctxT(t), url, c, all(c), PublishOptions{Connections: 2}); err != nil {
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

func TestShapesMatchSomething(t *testing.T) {
	c := smallCorpusForShapes(t)
	b, err := newShapeBuilder(c, 100, 1)
	if err != nil {
		t.Fatal(err)
	}
	m := verify.NewModel(c)
	for _, s := range Shapes {
		for range 20 {
			f, ok := b.build(s)
			if !ok {
				t.Fatalf("shape %s could not be built", s)
			}
			if _, all := m.Expected(&f, 0); len(all) == 0 {
				t.Fatalf("shape %s filter %s matches nothing", s, f.AppendJSON(nil))
			}
			if len(f.Authors) > 1 {
				seen := map[string]bool{}
				for _, a := range f.Authors {
					if seen[a] {
						t.Fatalf("duplicate author in %s", f.AppendJSON(nil))
					}
					seen[a] = true
				}
			}
		}
	}
}
