package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/relaybench/relaybench/nostr"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/runner"
	"github.com/relaybench/relaybench/verify"
	"github.com/relaybench/relaybench/workload"
)

type mixedCmd struct {
	targetFlags
	corpusFlags
	outputFlags
	Duration    time.Duration `default:"10s" help:"Length of each part: publish alone, query alone, then both together."`
	PublishRate float64       `name:"publish-rate" default:"1000" help:"Total fresh events/s, open loop."`
	QueryRate   float64       `name:"query-rate" default:"50" help:"Total queries/s, open loop."`
	Publishers  int           `default:"2" help:"Publisher connections."`
	Queriers    int           `default:"2" help:"Query connections (one REQ at a time each)."`
	Window      int           `default:"1024" help:"Unacknowledged EVENTs allowed per publisher."`
	QueryLimit  int           `name:"query-limit" default:"100" help:"Limit of each query filter."`
	Timeout     time.Duration `default:"10s" help:"How long an EVENT may wait for its OK, and a REQ for its EOSE."`
	SkipPreload bool          `name:"skip-preload" help:"Do not publish the corpus first (queries then run against what the relay holds)."`
}

func init() {
	register("mixed", "Publishers and queriers at once, each at its own rate, compared with each side alone.", &mixedCmd{})
}

func (c *mixedCmd) Run(g *Globals) error {
	s, err := startLive(g, "mixed", c.targetFlags, c.outputFlags)
	if err != nil {
		return err
	}
	crp, err := loadCorpus(g.Ctx, c.corpusFlags, s.prog)
	if err != nil {
		s.stop()
		return err
	}
	s.setCorpus(crp)
	var live []*nostr.Event
	if !c.SkipPreload {
		// The queries need data: publish the corpus first (its own phase).
		preload := runner.Workload{Name: "preload", Run: func(ctx context.Context, env runner.Env) ([]results.Phase, error) {
			all := make([]int, len(crp.Events))
			for i := range all {
				all[i] = i
			}
			po := workload.PublishOptions{Connections: 4, Mode: workload.ModePipeline, Timeout: c.Timeout, Begin: env.Sample}
			po.Progress = env.Progress(fmt.Sprintf("Publishing %d events to %s", len(all), env.URL), int64(len(all)))
			pr, err := workload.Publish(ctx, env.URL, crp, all, po)
			if pr == nil {
				return nil, err
			}
			acc := make([]*nostr.Event, 0, len(all))
			for _, i := range pr.StoredIndexes() {
				acc = append(acc, crp.Events[i])
			}
			live = verify.NewModel(acc).Live
			pr.Phase.Notes = append(pr.Phase.Notes, "preload for the mixed workload: the corpus the queries are drawn from")
			return []results.Phase{pr.Phase}, err
		}}
		if err := s.measure(preload, crp, nil); err != nil && g.Ctx.Err() == nil {
			return s.finish(c.Quiet, nil, err)
		}
	}
	err = s.measure(c.workload(), crp, live)
	return s.finish(c.Quiet, map[string]any{
		"duration": c.Duration.String(), "publish_rate": c.PublishRate, "query_rate": c.QueryRate,
		"publishers": c.Publishers, "queriers": c.Queriers, "query_limit": c.QueryLimit, "events": c.Events,
		"size": c.Size, "store": c.Store, "skip_preload": c.SkipPreload,
	}, err)
}

// workload is the mixed read/write workload with this command's options.
// Queries are drawn from what the relay holds (env.Live) or, when nothing
// was published in this run, from the corpus.
func (c *mixedCmd) workload() runner.Workload {
	return runner.Workload{Name: "mixed", Run: func(ctx context.Context, env runner.Env) ([]results.Phase, error) {
		source := env.Live
		if source == nil {
			source = env.Corpus.Events
		}
		maxLimit := 0
		if env.Info != nil {
			maxLimit = env.Info.Limitation.MaxLimit
		}
		o := workload.MixedOptions{
			Duration: c.Duration, PublishRate: c.PublishRate, QueryRate: c.QueryRate, Publishers: c.Publishers,
			Queriers: c.Queriers, Window: c.Window, Size: c.Size, Limit: c.QueryLimit, Timeout: c.Timeout,
			Seed: c.Seed, RelayCap: maxLimit, Source: source, Begin: env.Sample,
			Progress: func(part string) {
				if !c.NoProgress {
					fmt.Fprintf(os.Stderr, "mixed: %s (%v)\n", part, c.Duration)
				}
			},
		}
		return onePhase(workload.Mixed(ctx, env.URL, env.Corpus, o))
	}}
}
