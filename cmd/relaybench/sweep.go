package main

import (
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
