package main

import (
	"context"
	"fmt"

	"github.com/relaybench/relaybench/internal/rlimit"
	"github.com/relaybench/relaybench/judge"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/runner"
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

// checkFlags checks every flag before anything starts (see flags.go).
func (c *subscribeCmd) checkFlags() error {
	var r ranges
	r.add(c.targetFlags.validate())
	r.add(c.liveKeyFlags.validate())
	r.min("sub-count", c.Subscribers, 1)
	r.min("publishers", c.Publishers, 1)
	r.min("channels", c.Channels, 1)
	if c.Overlap < 1 || c.Overlap > c.Channels {
		r.bad("overlap", c.Overlap, "must be between 1 and --channels (%d)", c.Channels)
	}
	r.min("events", c.Events, 0)
	r.size("size", c.Size)
	r.notNegative("sub-duration", c.Duration)
	r.rateMax("rate", c.Rate, true, "sub-duration", c.Duration)
	r.min("window", c.Window, 0)
	r.window("window", c.Window, 1024, c.freshEvents())
	r.positive("grace", c.Grace)
	r.positive("timeout", c.Timeout)
	// Costs: the channel names, the fresh events (each with a delivery
	// time per subscriber), the connections.
	r.memory("channels", c.Channels, float64(c.Channels), 64, "channel name")
	flag, v := "events", any(c.Events)
	if c.Events == 0 {
		flag, v = "rate", c.Rate // --rate × --sub-duration
	}
	r.connPair("sub-count", c.Subscribers, "publishers", c.Publishers)
	r.memory(flag, v, c.freshEvents(), freshEventBytes(c.Size)+8*float64(c.Subscribers), "event, with its delivery time at each subscriber")
	r.memory("sub-count", c.Subscribers, float64(c.Subscribers), 8*c.freshEvents(), "subscriber (a delivery time per event)")
	r.add(c.outputFlags.validate())
	return r.err
}

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
		"filter": c.Filter, "events": c.events(), "size": c.Size, "rate": c.Rate, "mode": c.Mode, "window": c.Window,
		"duration": c.Duration.String(), "grace": c.Grace.String(), "store": c.Store,
	})
}

// events is the number of fresh events to publish: --events, else
// rate×duration, else 10000 (as workload.Subscribe defaults it).
func (c *subscribeCmd) events() int { return c.EventCount() }

// freshEvents is events() computed without overflow, for the cost check
// of an absurd --rate × --sub-duration.
func (c *subscribeCmd) freshEvents() float64 {
	if c.Events == 0 && c.Rate > 0 && c.Duration > 0 {
		return max(1, c.Rate*c.Duration.Seconds())
	}
	return float64(c.events())
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
