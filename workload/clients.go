package workload

import (
	"context"
	"fmt"

	"github.com/relaybench/relaybench/flagcheck"
	"github.com/relaybench/relaybench/internal/progress"
	"github.com/relaybench/relaybench/nostr"
	"github.com/relaybench/relaybench/outcome"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/verify"
)

func init() {
	Declare[ClientsOptions](Decl{Name: "clients", Brief: "the queries clients send, 20 of each shape", Input: NeedsCorpus, JudgesSet: true,
		Summary: "Publish the corpus, then send the queries Nostr clients send (home feed, profiles, threads, notifications, …), each drawn from the corpus so it hits, and verify every answer."})
}

// ClientsOptions configure the clients workload: the queries Nostr clients
// send (ClientShapes, or another mix), drawn from what the relay accepted
// and verified like the query phase. Base's Timeout bounds each EOSE.
type ClientsOptions struct {
	Base             `kong:"-" set:"timeout=10s"`
	Queries          int    `default:"180" help:"Number of queries, rotating through the shapes of --query-mix (180: 20 of each client shape)."`
	QueryLimit       int    `name:"query-limit" default:"100" help:"Limit of each query filter (profiles and ids ask for as many events as they name; addressable for 1)."`
	QueryConcurrency int    `name:"query-concurrency" aliases:"query-conns" default:"1" help:"Query connections running at once (alias --query-conns), each running the mix one query at a time (queries/s and events returned/s are over all of them)."`
	QueryMix         string `name:"query-mix" default:"clients" placeholder:"MIX" help:"Query shapes: clients (global, home, profiles, thread, notifications, hashtag, ids, reactions, addressable), reference (kind, time-range, tag-p, tag-t, author, complex), all, or a comma-separated list of shapes."`
}

// Run queries env's relay with the mix, drawing each filter from what the
// publish phase left on it (env.Model), else from the corpus.
func (o ClientsOptions) Run(ctx context.Context, env Env) ([]results.Phase, error) {
	applyDefaults(&o)
	shapes, err := ParseMix(o.QueryMix)
	if err != nil {
		return nil, err
	}
	model := env.Model
	if model == nil && env.Live != nil {
		model = verify.NewModel(env.Live)
	}
	var source []*nostr.Event
	if model != nil {
		source = model.Live
	} else if env.Corpus != nil {
		source = env.Corpus.Events
	}
	if len(source) == 0 {
		l := outcome.New(results.OpQuery, int64(o.Queries))
		why := "the relay accepted none of the published events"
		l.Settle(outcome.NotRun, why)
		ph := results.NewPhase("clients", "query")
		ph.Accounts, ph.Notes = []results.Account{l.Result()}, []string{"not run: " + why}
		return []results.Phase{ph}, nil
	}
	o.fromEnv(env, progress.Counting(fmt.Sprintf("Querying events from %s", env.URL), "Executed", "query", "queries", int64(o.Queries)), int64(o.Queries))
	q := QueryOptions{Base: o.Base, Queries: o.Queries, Limit: o.QueryLimit, Connections: o.QueryConcurrency,
		Shapes: shapes, Name: "clients", RelayCap: env.relayCap()}
	return onePhase(Query(ctx, env.URL, model, source, q))
}

// Check checks the options as the CLI's flags set them (Checked): the
// queries, their connections and what their answers from in's corpus cost.
func (o ClientsOptions) Check(r *flagcheck.Ranges, in CheckInput) {
	r.Min("queries", o.Queries, 1)
	r.QueryLimit("query-limit", o.QueryLimit)
	r.Min("query-concurrency", o.QueryConcurrency, 1)
	if _, err := ParseMix(o.QueryMix); err != nil {
		r.Bad("query-mix", o.QueryMix, "%v", err)
	}
	r.Conns("query-concurrency", o.QueryConcurrency, o.QueryConcurrency)
	r.QueryMemory("query-limit", o.QueryLimit, 1, o.QueryLimit, in.Events, in.Size)
	r.QueryMemory("queries", o.Queries, o.Queries, o.QueryLimit, in.Events, in.Size)
}
