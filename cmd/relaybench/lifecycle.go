package main

import (
	"github.com/relaybench/relaybench/runner"
	"github.com/relaybench/relaybench/workload"
)

type lifecycleCmd struct {
	targetFlags
	liveKeyFlags
	outputFlags
	workload.LifecycleOptions
}

func init() {
	registerWorkload("lifecycle", &lifecycleCmd{})
}

func (c *lifecycleCmd) Run(g *Globals) error {
	return runLiveCommand(g, "lifecycle", c.targetFlags, c.liveKeyFlags, c.outputFlags, c.workload(), map[string]any{
		"events": c.Events, "size": c.Size, "timeout": c.Timeout.String(), "read_timeout": c.ReadTimeout.String(), "store": c.Store,
	})
}

// workload is the lifecycle workload with this command's options.
func (c *lifecycleCmd) workload() runner.Workload {
	o := c.LifecycleOptions
	o.Seed = c.liveKeyFlags.Seed
	return declared("lifecycle", &o)
}
