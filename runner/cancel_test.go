package runner

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/relaybench/relaybench/corpus"
	"github.com/relaybench/relaybench/internal/testrelay"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/verify"
	"github.com/relaybench/relaybench/workload"
)

// TestCancelDuringPublishDoesNoCorpusWork: a run stopped by the user while
// it publishes returns what it measured without any work that grows with
// the corpus — no model of what the relay stored, no parsing of a streamed
// corpus, no query phase — so that a signal ends the process at once at any
// corpus size. The work not done (the rest of the publish phase, the
// queries) is booked as cancelled, never blamed on the relay. Counted, not
// timed: it holds on a loaded machine.
func TestCancelDuringPublishDoesNoCorpusWork(t *testing.T) {
	var builds atomic.Int64
	defer func(f func(*corpus.Corpus, *workload.PublishResult) (*verify.Model, error)) { buildModel = f }(buildModel)
	buildModel = func(c *corpus.Corpus, pr *workload.PublishResult) (*verify.Model, error) {
		builds.Add(1)
		return storedModel(c, pr)
	}
	r := testrelay.Start(t, testrelay.Config{OKDelay: 2 * time.Millisecond})
	guard, stop := context.WithTimeout(context.Background(), 2*time.Minute) // hang guard only
	defer stop()
	p := corpus.Params{Seed: 5, Events: 1500, Authors: 20, AvgSize: 200, Spread: corpus.DefaultSpread,
		Anchor: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC).Unix()}.WithDefaults()
	c, err := corpus.Load(guard, p, corpus.Options{CacheDir: t.TempDir(), StreamAbove: -1}) // streamed: parsing it is corpus-sized work
	if err != nil {
		t.Fatal(err)
	}
	if !c.Streamed() {
		t.Fatal("want a streamed corpus")
	}
	ctx, cancel := context.WithCancel(guard)
	defer cancel()
	const stopAt = 20
	cfg := Config{
		Publish: workload.PublishOptions{Connections: 2},
		Query:   workload.QueryOptions{Queries: 30, Limit: 10},
		// The user's signal, while publishing: after the 20th answer.
		Progress: func(label string, total int64) func(int64) {
			return func(done int64) {
				if done >= stopAt {
					cancel()
				}
			}
		},
	}
	run, err := Run(ctx, c, cfg, Target{URL: r.URL()})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want cancelled", err)
	}
	if n := builds.Load(); n != 0 {
		t.Fatalf("the stored-events model was built %d times after the cancel", n)
	}
	if c.Events != nil {
		t.Fatalf("the streamed corpus was parsed (%d events) after the cancel", len(c.Events))
	}
	if len(run.Phases) != 2 || run.Phases[0].Name != "publish" || run.Phases[1].Name != "query" {
		t.Fatalf("want the publish phase and the query phase booked cancelled, got %d phases", len(run.Phases))
	}
	if q := run.Phases[1].Account(results.OpQuery); q == nil || q.Requested != 30 || q.Cancelled != 30 {
		t.Fatalf("the queries not started are not booked cancelled: %+v", q)
	}
	a := run.Phases[0].Account(results.OpEvent)
	if a == nil || !a.Balanced() || a.Requested != int64(p.Events) {
		t.Fatalf("publish account does not add up to the corpus: %+v", a)
	}
	if a.Cancelled == 0 || a.Accepted < stopAt {
		t.Fatalf("want the events not sent booked as cancelled, and the %d answered ones kept: %+v", stopAt, a)
	}
	if a.Refused+a.TimedOut+a.ConnLost+a.NotRun != 0 {
		t.Fatalf("cancelled work blamed on the relay: %+v", a)
	}
}

// TestWorkloadCancelledBeforeItStarts: a workload whose context is already
// cancelled (a signal while the relay started) neither parses a streamed
// corpus nor runs, and is booked as interrupted before it started.
func TestWorkloadCancelledBeforeItStarts(t *testing.T) {
	p := corpus.Params{Seed: 6, Events: 300, Authors: 10, AvgSize: 100, Spread: corpus.DefaultSpread,
		Anchor: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC).Unix()}.WithDefaults()
	c, err := corpus.Load(t.Context(), p, corpus.Options{CacheDir: t.TempDir(), StreamAbove: -1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	ran := false
	w := Workload{Name: "w", Run: func(context.Context, Env) ([]results.Phase, error) { ran = true; return nil, nil }}
	phases, err := RunWorkload(ctx, w, Env{Corpus: c}, nil, 1)
	if !errors.Is(err, context.Canceled) || ran || c.Events != nil {
		t.Fatalf("err %v, ran %v, corpus parsed %v", err, ran, c.Events != nil)
	}
	if len(phases) != 1 || phases[0].Aborted == "" {
		t.Fatalf("want one phase booked as interrupted before it started, got %+v", phases)
	}
}
