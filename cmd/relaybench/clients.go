package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/relaybench/relaybench/internal/progress"
	"github.com/relaybench/relaybench/nostr"
	"github.com/relaybench/relaybench/outcome"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/runner"
	"github.com/relaybench/relaybench/verify"
	"github.com/relaybench/relaybench/workload"
)

// clientsCmd publishes the corpus, then sends the queries clients send
// (workload.ClientShapes, or another --query-mix), verified like the query
// phase. As a --workloads entry it queries what the publish phase left.
type clientsCmd struct {
	targetFlags
	corpusFlags
	publishFlags
	Queries          int    `default:"180" help:"Number of queries, rotating through the shapes of --query-mix (180: 20 of each client shape)."`
	QueryLimit       int    `name:"query-limit" default:"100" help:"Limit of each query filter (profiles and ids ask for as many events as they name; addressable for 1)."`
	QueryConcurrency int    `name:"query-concurrency" aliases:"query-conns" default:"1" help:"Query connections running at once (alias --query-conns), each running the mix one query at a time (queries/s and events returned/s are over all of them)."`
	QueryMix         string `name:"query-mix" default:"clients" placeholder:"MIX" help:"Query shapes: clients (global, home, profiles, thread, notifications, hashtag, ids, reactions, addressable), reference (kind, time-range, tag-p, tag-t, author, complex), all, or a comma-separated list of shapes."`
	outputFlags
}

func init() {
	register("clients", "Publish the corpus, then send the queries Nostr clients send (home feed, profiles, threads, notifications, …), each drawn from the corpus so it hits, and verify every answer.", &clientsCmd{})
}

func (c *clientsCmd) checkFlags() error {
	var r ranges
	r.add(c.targetFlags.validate())
	r.add(c.corpusFlags.validate())
	r.add(c.publishFlags.validate())
	c.publishFlags.checkWindow(&r, c.corpusFlags)
	r.min("queries", c.Queries, 1)
	r.queryLimit("query-limit", c.QueryLimit)
	r.min("query-concurrency", c.QueryConcurrency, 1)
	if _, err := workload.ParseMix(c.QueryMix); err != nil {
		r.bad("query-mix", c.QueryMix, "%v", err)
	}
	r.conns("query-concurrency", c.QueryConcurrency, c.QueryConcurrency)
	r.queryMemory("query-limit", c.QueryLimit, 1, c.QueryLimit, c.Events, c.Size)
	r.queryMemory("queries", c.Queries, c.Queries, c.QueryLimit, c.Events, c.Size)
	r.add(c.outputFlags.validate())
	return r.err
}

func (c *clientsCmd) Run(g *Globals) error {
	ctx := g.Ctx
	started := time.Now()
	path, err := c.resultsPath("clients", started)
	if err != nil {
		return err
	}
	if err := pinClient(c.ClientCPUs); err != nil {
		return err
	}
	prog := progress.New(os.Stderr, !c.NoProgress)
	crp, err := loadCorpus(ctx, c.corpusFlags, prog)
	if err != nil {
		return err
	}
	target, ref, stop, err := resolveTargetRef(ctx, c.targetFlags, c.Out, g.Verbose)
	if err != nil {
		return err
	}
	defer stop()
	cfg := runner.Config{
		Workloads:   []runner.Workload{c.workload()},
		Publish:     c.publishFlags.options(),
		SkipPublish: c.SkipPublish,
		SkipQuery:   true, // the clients phase is the query phase
		ClientCores: clientCores(c.ClientCPUs),
		Progress:    progressFunc(prog),
	}
	file := newResultsFile("clients", started)
	r, runErr := runner.Run(ctx, crp, cfg, target)
	r.Notes = append(r.Notes, ref.notes()...)
	r.Params = c.params()
	if c.Relay == "" {
		r.Params["store"] = c.Store
	}
	file.Runs = append(file.Runs, r)
	return finishRun(ctx, file, path, c.Quiet, runErr)
}

// params records the flags that shaped the run.
func (c *clientsCmd) params() map[string]any {
	p := map[string]any{"events": c.Events, "size": c.Size, "seed": c.Seed, "authors": c.Authors}
	if c.Corpus != "" {
		p = map[string]any{"corpus": c.Corpus, "seed": c.Seed, "authors": c.Authors}
	}
	if c.SkipPublish {
		p["skip_publish"] = true
	} else {
		p["concurrency"], p["mode"] = c.Concurrency, c.Mode
		if c.Mode == "pipeline" {
			p["window"] = c.Window
		}
	}
	p["queries"], p["query_limit"], p["query_concurrency"], p["query_mix"] = c.Queries, c.QueryLimit, c.QueryConcurrency, c.QueryMix
	return p
}

// workload is the clients phase with this command's options. Its queries
// are drawn from what the relay should hold after the publish phase and
// verified against it; without a publish phase in this run, from the corpus,
// and then checked for validity and filter match only.
func (c *clientsCmd) workload() runner.Workload {
	return runner.Workload{Name: "clients", Run: func(ctx context.Context, env runner.Env) ([]results.Phase, error) {
		shapes, err := workload.ParseMix(c.QueryMix)
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
		} else {
			source = env.Corpus.Events
		}
		if len(source) == 0 {
			l := outcome.New(results.OpQuery, int64(c.Queries))
			why := "the relay accepted none of the published events"
			l.Settle(outcome.NotRun, why)
			return []results.Phase{{Name: "clients", Workload: "query", Counts: map[string]int64{},
				Accounts: []results.Account{l.Result()}, Notes: []string{"not run: " + why}}}, nil
		}
		o := workload.QueryOptions{
			Queries: c.Queries, Limit: c.QueryLimit, Connections: c.QueryConcurrency, Timeout: c.Timeout,
			Seed: c.Seed, Shapes: shapes, Name: "clients", Begin: env.Sample,
			Progress: env.Progress(fmt.Sprintf("Querying events from %s", env.URL), int64(c.Queries)),
		}
		if env.Info != nil {
			o.RelayCap = env.Info.Limitation.MaxLimit
		}
		return onePhase(workload.Query(ctx, env.URL, model, source, o))
	}}
}
