package main

import (
	"context"
	"fmt"

	"github.com/relaybench/relaybench/internal/rlimit"
	"github.com/relaybench/relaybench/judge"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/runner"
	"github.com/relaybench/relaybench/threshold"
	"github.com/relaybench/relaybench/workload"
)

type subscribeCmd struct {
	targetFlags
	liveKeyFlags
	outputFlags
	subSegmentFlags
	workload.SubscribeOptions
	SourceAddrs string `name:"source-addrs" placeholder:"ADDRS" help:"Local addresses to spread the connections over, e.g. 127.0.0.2-127.0.0.9 or 127.0.0.2,127.0.0.3 (default: one address; 127.0.0.1…127.0.0.K on their own past ~20,000 connections to a loopback relay)."`
}

func init() {
	registerWorkload("subscribe", &subscribeCmd{})
}

// checkFlags checks every flag before anything starts (see check.go): the
// options check their own (workload.SubscribeOptions.Check).
func (c *subscribeCmd) checkFlags() error {
	return checkWorkload(&c.SubscribeOptions, workload.CheckInput{}, c.outputFlags, c.targetFlags.validate(), c.liveKeyFlags.validate())
}

// figurePlan is what subscribe writes (its one phase), for checking
// --threshold figures before any work.
func (c *subscribeCmd) figurePlan() threshold.Plan { return livePlan(false, "subscribe") }

func (c *subscribeCmd) Run(g *Globals) error {
	if err := c.subscribeSegment(); err != nil {
		return segmentUsage(err)
	}
	if c.SourceAddrs != "" {
		if _, err := workload.ParseSourceAddrs(c.SourceAddrs); err != nil {
			return withCode(judge.Usage, fmt.Errorf("--source-addrs: %w", err))
		}
	}
	// Raise the open-file limit before the relay starts (it inherits it).
	if err := rlimit.Need(c.Subscribers + c.Publishers); err != nil {
		return withCode(judge.Usage, err)
	}
	return c.runSubscribe(g, map[string]any{
		"subscribers": c.Subscribers, "publishers": c.Publishers, "channels": c.Channels, "overlap": c.Overlap,
		"filter": c.Filter, "events": c.EventCount(), "size": c.Size, "rate": c.Rate, "mode": c.Mode, "window": c.Window,
		"duration": c.Duration.String(), "grace": c.Grace.String(), "store": c.Store,
	})
}

// workload is the fan-out workload with this command's options: under
// --segment, its share, started at --start-at, with the segment's timing
// settled after it.
func (c *subscribeCmd) workload() runner.Workload {
	o := c.SubscribeOptions
	o.Seed, o.Segment, o.StartAt = c.liveKeyFlags.Seed, c.seg, c.startAt
	if c.SourceAddrs != "" {
		o.SourceAddrs, _ = workload.ParseSourceAddrs(c.SourceAddrs) // checked in Run
	}
	w := declared("subscribe", &o)
	run := w.Run
	w.Run = func(ctx context.Context, env runner.Env) ([]results.Phase, error) {
		env.Sample = c.segRun.Sampler(env.Sample)
		stop := startCPUProfile("subscribe")
		phases, err := run(ctx, env)
		stop()
		for i := range phases {
			c.segRun.Settle(&phases[i])
		}
		return phases, err
	}
	return w
}
