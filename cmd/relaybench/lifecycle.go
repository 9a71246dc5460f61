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

// checkFlags checks every flag before anything starts (see flags.go).
func (c *lifecycleCmd) checkFlags() error {
	var r ranges
	r.add(c.targetFlags.validate())
	r.add(c.liveKeyFlags.validate())
	r.min("timing-events", c.Events, 1)
	r.size("size", c.Size)
	r.positive("timeout", c.Timeout)
	r.positive("read-timeout", c.ReadTimeout)
	r.memory("timing-events", c.Events, float64(c.Events), freshEventBytes(c.Size)+recordBytes, "event")
	r.add(c.outputFlags.validate())
	return r.err
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
