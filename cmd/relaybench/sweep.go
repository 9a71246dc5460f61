package main

import (
	"fmt"

	"github.com/relaybench/relaybench/runner"
	"github.com/relaybench/relaybench/workload"
)

type sweepCmd struct {
	targetFlags
	liveKeyFlags
	outputFlags
	workload.SweepOptions
}

func init() {
	registerWorkload("sweep", &sweepCmd{})
}

// checkFlags checks every flag before anything starts (see flags.go).
func (c *sweepCmd) checkFlags() error {
	var r ranges
	r.add(c.targetFlags.validate())
	r.add(c.liveKeyFlags.validate())
	if len(c.Sizes) == 0 {
		r.bad("sizes", `""`, "give at least one size")
	}
	for _, s := range c.Sizes {
		r.size("sizes", s)
	}
	r.min("events", c.Events, 1)
	r.min("publishers", c.Publishers, 1)
	r.min("subscribers", c.Subscribers, 1)
	r.min("window", c.Window, 1)
	r.window("window", c.Window, 64, float64(c.Events))
	r.notNegative("duration", c.Duration)
	r.rateMax("rate", c.Rate, true, "duration", c.Duration)
	r.positive("grace", c.Grace)
	r.positive("timeout", c.Timeout)
	// Costs: one size at a time, its events signed before its clock.
	biggest := 0
	for _, s := range c.Sizes {
		biggest = max(biggest, s)
	}
	r.connPair("subscribers", c.Subscribers, "publishers", c.Publishers)
	r.memory("events", c.Events, float64(c.Events), freshEventBytes(biggest)+8*float64(c.Subscribers), "event of "+fmt.Sprint(biggest)+" bytes, with its delivery time at each subscriber")
	r.memory("subscribers", c.Subscribers, float64(c.Subscribers), 8*float64(c.Events), "subscriber (a delivery time per event)")
	r.add(c.outputFlags.validate())
	return r.err
}

func (c *sweepCmd) Run(g *Globals) error {
	return runLiveCommand(g, "sweep", c.targetFlags, c.liveKeyFlags, c.outputFlags, c.workload(), map[string]any{
		"sizes": c.Sizes, "events": c.Events, "publishers": c.Publishers, "subscribers": c.Subscribers,
		"mode": c.Mode, "window": c.Window, "rate": c.Rate, "store": c.Store,
	})
}

// workload is the sweep workload with this command's options.
func (c *sweepCmd) workload() runner.Workload {
	o := c.SweepOptions
	o.Seed = c.liveKeyFlags.Seed
	return declared("sweep", &o)
}
