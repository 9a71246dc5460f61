package main

import (
	"context"
	"fmt"

	"github.com/relaybench/relaybench/internal/numfmt"
	"github.com/relaybench/relaybench/internal/progress"
	"github.com/relaybench/relaybench/nostr"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/runner"
	"github.com/relaybench/relaybench/threshold"
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

// checkFlags checks every flag before anything starts (see check.go): the
// options check their own (workload.MixedOptions.Check).
func (c *mixedCmd) checkFlags() error {
	return checkWorkload(&c.MixedOptions, workload.CheckInput{Events: c.Events, Size: c.corpusFlags.Size}, c.outputFlags,
		c.targetFlags.validate(), c.corpusFlags.validate())
}

// figurePlan is what mixed writes, for checking --threshold figures before
// any work: the corpus's publish phase (unless --skip-preload), then mixed.
func (c *mixedCmd) figurePlan() threshold.Plan { return livePlan(!c.SkipPreload, "mixed") }

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
			po.Progress = env.Progress(progress.Counting(fmt.Sprintf("Publishing %s to %s", numfmt.Count(len(all), "event"), env.URL), "Published", "event", "events", int64(len(all))), int64(len(all)))
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
// --no-progress keeps its part lines off standard error, not off the
// live view (--web shows the part under way: quietParts).
func (c *mixedCmd) workload() runner.Workload {
	o := c.MixedOptions
	o.Seed, o.Size = c.corpusFlags.Seed, c.corpusFlags.Size
	w := declared("mixed", &o)
	if c.NoProgress {
		return withQuietParts(w)
	}
	return w
}

// withQuietParts is w with its part lines kept off its log (quietParts).
func withQuietParts(w runner.Workload) runner.Workload {
	run := w.Run
	w.Run = func(ctx context.Context, env runner.Env) ([]results.Phase, error) {
		if env.Log != nil {
			env.Log = quietParts{env.Log, w.Name + ": "}
		}
		return run(ctx, env)
	}
	return w
}
