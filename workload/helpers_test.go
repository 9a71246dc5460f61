package workload

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/relaybench/relaybench/corpus"
	"github.com/relaybench/relaybench/internal/testkit"
	"github.com/relaybench/relaybench/internal/testrelay"
	"github.com/relaybench/relaybench/judge"
	"github.com/relaybench/relaybench/nostr"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/verify"
)

// The helpers the package's tests share: corpora, relays, contexts,
// models of what a relay holds, accounts and verdicts.

// sharedCorpus is a corpus generated (signed) once, for every test that
// asks for it.
type sharedCorpus struct {
	p    corpus.Params
	once sync.Once
	c    *corpus.Corpus
	err  error
}

func (s *sharedCorpus) get(t testing.TB) *corpus.Corpus {
	t.Helper()
	s.once.Do(func() {
		s.c, s.err = corpus.Generate(context.Background(), s.p.WithDefaults(), corpus.Options{CacheDir: "off"})
	})
	if s.err != nil {
		t.Fatal(s.err)
	}
	return s.c
}

var (
	// 600 events in a fixed window: the same events every run, so real
	// relays' answers do not change with the hour the tests run.
	smallEvents = &sharedCorpus{p: corpus.Params{Seed: 7, Events: 600, Authors: 40, AvgSize: 300, Spread: corpus.DefaultSpread,
		Anchor: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC).Unix()}}
	// 30 events: the live workloads only need its keys.
	keyEvents = &sharedCorpus{p: corpus.Params{Seed: 3, Events: 30, Authors: 30, AvgSize: 200, Spread: corpus.DefaultSpread}}
)

// smallCorpus is the 600-event corpus shared by the tests.
func smallCorpus(t testing.TB) *corpus.Corpus { return smallEvents.get(t) }

// testKeys returns a small corpus: the live workloads only need its keys.
func testKeys(t testing.TB) *corpus.Corpus { return keyEvents.get(t) }

// all is the index of every event of c.
func all(c *corpus.Corpus) []int {
	idx := make([]int, len(c.Events))
	for i := range idx {
		idx[i] = i
	}
	return idx
}

// embeddedURL starts the embedded relay with store on 127.0.0.1, closed
// when the test ends.
var embeddedURL = testkit.EmbeddedURL

// testCtx is a test's context: a hang guard, cancelled when the test ends.
func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// cancelOnce returns a child of ctx that the user cancels (a Ctrl-C) once
// cond holds (polled); it stops polling when ctx ends.
func cancelOnce(ctx context.Context, cond func() bool) context.Context {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for !cond() {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
		cancel()
	}()
	return ctx
}

// cancelWhen is the test's context, cancelled once cond holds.
func cancelWhen(t *testing.T, cond func() bool) context.Context {
	return cancelOnce(testCtx(t), cond)
}

// runCancelled runs a workload (run) against a test relay with cfg that
// checks every EVENT's signature, and the user cancels it (a Ctrl-C) once
// the relay has received n EVENTs; it checks that the workload returned
// the cancel, promptly (a hang guard: not after its timeouts).
func runCancelled(t *testing.T, cfg testrelay.Config, n int, run func(ctx context.Context, url string) (results.Phase, error)) results.Phase {
	t.Helper()
	cfg.Verify = true
	r := testrelay.Start(t, cfg)
	ctx := cancelWhen(t, func() bool { return r.Stats().Events >= n })
	stamp := make(chan time.Time, 1)
	go func() { <-ctx.Done(); stamp <- time.Now() }()
	ph, err := run(ctx, r.URL())
	returned := time.Now()
	checkCanceled(t, err)
	if d := returned.Sub(<-stamp); d > 5*time.Second {
		t.Errorf("returned %v after the interrupt", d)
	}
	return ph
}

// checkCanceled: a workload the user cancelled returned the context's
// error.
func checkCanceled(t *testing.T, err error) {
	t.Helper()
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want %v", err, context.Canceled)
	}
}

// storedModel is the model of what the relay holds after pr published c:
// the events it stored.
func storedModel(c *corpus.Corpus, pr *PublishResult) *verify.Model {
	var acc []*nostr.Event
	for _, i := range pr.StoredIndexes() {
		acc = append(acc, c.Events[i])
	}
	return verify.NewModel(acc)
}

// publishSmall publishes the small corpus to url (4 connections, in mode,
// a window of 16) and returns the result and the model of what the relay
// stored.
func publishSmall(t *testing.T, url, mode string) (*PublishResult, *verify.Model) {
	t.Helper()
	c := smallCorpus(t)
	pr, err := Publish(testCtx(t), url, c, all(c), PublishOptions{Base: Base{Timeout: 5 * time.Second}, Connections: 4, Mode: mode, Window: 16})
	if err != nil {
		t.Fatalf("publish: %v", err)
	}
	return pr, storedModel(c, pr)
}

// outcomeModel is the model of what the relay holds after pr published c,
// the events without a decisive answer unknown (as the runner's); it
// returns the unknown events too.
func outcomeModel(c *corpus.Corpus, pr *PublishResult) (*verify.Model, []*nostr.Event) {
	var acc, unknown []*nostr.Event
	for i, o := range pr.Outcomes {
		switch {
		case o == Accepted || o == Duplicate:
			acc = append(acc, c.Events[i])
		case Undecided(o):
			unknown = append(unknown, c.Events[i])
		}
	}
	return verify.NewModelUnknown(acc, unknown), unknown
}

// account returns the phase's account of op, failing when it is absent or
// unbalanced.
func account(t *testing.T, ph results.Phase, op string) results.Account {
	t.Helper()
	a := ph.Account(op)
	if a == nil {
		t.Fatalf("no %s account in %+v", op, ph.Accounts)
	}
	if !a.Balanced() {
		t.Fatalf("unbalanced %s account %+v", op, *a)
	}
	return *a
}

// split is an account's outcomes: accepted, refused, timed out, connection
// lost, not run, cancelled.
type split struct{ acc, ref, to, lost, notRun, canc int64 }

// wantSplit asserts the phase's account of op is balanced and split as
// want, and returns it.
func wantSplit(t *testing.T, ph results.Phase, op string, want split) results.Account {
	t.Helper()
	a := account(t, ph, op)
	if got := (split{a.Accepted, a.Refused, a.TimedOut, a.ConnLost, a.NotRun, a.Cancelled}); got != want {
		t.Errorf("%s account %+v, want %+v", op, a, want)
	}
	return a
}

// phaseVerdict is the judge's verdict on a results file holding ph alone.
func phaseVerdict(ph results.Phase, interrupted bool) results.Verdict {
	f := &results.File{Runs: []results.Run{{Phases: []results.Phase{ph}}}}
	return judge.Judge(f, interrupted)
}

// reasonsMention says whether one of the verdict's reasons contains s.
func reasonsMention(v results.Verdict, s string) bool {
	for _, r := range v.Reasons {
		if strings.Contains(r, s) {
			return true
		}
	}
	return false
}

// checkLatency asserts a latency distribution is present, positive and
// below a generous bound.
func checkLatency(t *testing.T, name string, h *results.Histogram, want int64) {
	t.Helper()
	if h == nil {
		t.Fatalf("%s latency missing", name)
	}
	if h.Count != want {
		t.Errorf("%s latency: %d samples, want %d", name, h.Count, want)
	}
	if h.Count > 0 && (h.Min <= 0 || h.Max >= int64(20*time.Second)) {
		t.Errorf("%s latency out of bounds: min %d max %d ns", name, h.Min, h.Max)
	}
}

// containsPrefix says whether a string of list begins with p.
func containsPrefix(list []string, p string) bool {
	for _, s := range list {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// findMaxP99 is find-max's options with a 50 ms p99 target and a pool of
// pool events, its defaults applied: what a step is judged against.
func findMaxP99(pool int) FindMaxOptions {
	o := FindMaxOptions{P99: 50 * time.Millisecond, Load: LoadOptions{Pool: pool}}
	_ = o.defaults()
	return o
}

// p99Hist is a one-sample latency distribution whose p99 is p99 (its p50
// and mean half of it).
func p99Hist(p99 int64) *results.Histogram {
	return &results.Histogram{Count: 1, Mean: float64(p99) / 2, Percentiles: map[string]int64{"50": p99 / 2, "99": p99}}
}
