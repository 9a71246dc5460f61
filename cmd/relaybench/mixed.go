package main

import (
	"context"
	"fmt"

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
	workload.MixedOptions
	SkipPreload bool `name:"skip-preload" help:"Do not publish the corpus first (queries then run against what the relay holds)."`
}

func init() {
	registerWorkload("mixed", &mixedCmd{})
}

// checkFlags checks every flag before anything starts (see flags.go).
func (c *mixedCmd) checkFlags() error {
	var r ranges
	r.add(c.targetFlags.validate())
	r.add(c.corpusFlags.validate())
	r.positive("duration", c.Duration)
	r.rateMax("publish-rate", c.PublishRate, false, "duration", c.Duration)
	r.rateMax("query-rate", c.QueryRate, false, "duration", c.Duration)
	r.min("publishers", c.Publishers, 1)
	r.min("queriers", c.Queriers, 1)
	r.min("window", c.Window, 1)
	r.window("window", c.Window, 1024, 0)
	r.queryLimit("query-limit", c.Limit)
	r.positive("timeout", c.Timeout)
	// Costs: two parts' fresh events signed before the clock, the
	// queries of three parts and their answers, the connections.
	r.connPair("publishers", c.Publishers, "queriers", c.Queriers)
	perQuery := recordBytes + float64(min(c.Limit, c.Events))*storedEventBytes(c.corpusFlags.Size)
	r.memory("query-limit", c.Limit, 1, perQuery, "query and its answer")
	withDur := func(v float64) string { return fmt.Sprintf("%g (× --duration %v)", v, c.Duration) }
	r.memory("publish-rate", withDur(c.PublishRate), 2*c.PublishRate*c.Duration.Seconds(), freshEventBytes(c.corpusFlags.Size), "event")
	r.memory("query-rate", withDur(c.QueryRate), 2*c.QueryRate*c.Duration.Seconds(), perQuery, "query and its answer")
	r.add(c.outputFlags.validate())
	return r.err
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
			po := workload.PublishOptions{Base: workload.Base{Timeout: c.Timeout, Begin: env.Sample}, Connections: 4, Mode: workload.ModePipeline}
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
			return s.finish(nil, err)
		}
	}
	err = s.measure(c.workload(), crp, live)
	return s.finish(map[string]any{
		"duration": c.Duration.String(), "publish_rate": c.PublishRate, "query_rate": c.QueryRate,
		"publishers": c.Publishers, "queriers": c.Queriers, "query_limit": c.Limit, "events": c.Events,
		"size": c.corpusFlags.Size, "store": c.Store, "skip_preload": c.SkipPreload,
	}, err)
}

// workload is the mixed read/write workload with this command's options.
func (c *mixedCmd) workload() runner.Workload {
	o := c.MixedOptions
	o.Seed, o.Size = c.corpusFlags.Seed, c.corpusFlags.Size
	if c.NoProgress {
		o.Parts = func(string) {}
	}
	return declared("mixed", &o)
}
