package main

import (
	"github.com/relaybench/relaybench/runner"
	"github.com/relaybench/relaybench/workload"
)

type burstCmd struct {
	targetFlags
	liveKeyFlags
	outputFlags
	workload.BurstOptions
}

func init() {
	registerWorkload("burst", &burstCmd{})
}

func (c *burstCmd) Run(g *Globals) error {
	return runLiveCommand(g, "burst", c.targetFlags, c.liveKeyFlags, c.outputFlags, c.workload(), map[string]any{
		"bursts": c.Bursts, "burst_size": c.BurstSize, "every": c.Every.String(), "connections": c.Connections,
		"window": c.Window, "between_rate": c.BetweenRate, "size": c.Size, "store": c.Store,
	})
}

// backgroundRate is --between-rate as the workload reads it: there 0 means
// the default and a negative rate none; on the command line 0 means none
// and a negative rate is refused.
func backgroundRate(v float64) float64 {
	if v == 0 {
		return -1
	}
	return v
}

// workload is the burst workload with this command's options.
func (c *burstCmd) workload() runner.Workload {
	o := c.BurstOptions
	o.Seed = c.liveKeyFlags.Seed
	return declared("burst", &o)
}
