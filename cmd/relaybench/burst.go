package main

import (
	"fmt"
	"time"

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

// checkFlags checks every flag before anything starts (see flags.go).
func (c *burstCmd) checkFlags() error {
	var r ranges
	r.add(c.targetFlags.validate())
	r.add(c.liveKeyFlags.validate())
	r.min("bursts", c.Bursts, 1)
	r.min("burst-size", c.BurstSize, 1)
	r.positive("every", c.Every)
	r.min("connections", c.Connections, 1)
	r.min("window", c.Window, 1)
	r.window("window", c.Window, 1024, float64(c.Bursts)*float64(c.BurstSize))
	r.span("bursts", fmt.Sprintf("%d (× --every %v)", c.Bursts, c.Every), float64(c.Bursts), c.Every)
	r.rateMax("between-rate", c.BetweenRate, true, "every", time.Duration(c.Bursts)*c.Every)
	r.rate("recovery-within", c.RecoveryWithin, false)
	if c.RecoveryWithin > maxRecoveryWithin {
		r.bad("recovery-within", c.RecoveryWithin, "must be at most %d (latency within %d× its median is no recovery)", maxRecoveryWithin, maxRecoveryWithin+1)
	}
	r.between("recovery-run", c.RecoveryRun, 1, maxRunEvents)
	if bg := c.BetweenRate * (time.Duration(c.Bursts) * c.Every).Seconds(); c.BetweenRate > 0 && float64(c.RecoveryRun) > bg {
		r.bad("recovery-run", c.RecoveryRun, "is more than the %.0f background events of the run (--between-rate %g × --bursts %d × --every %v)", bg, c.BetweenRate, c.Bursts, c.Every)
	}
	r.size("size", c.Size)
	r.positive("timeout", c.Timeout)
	// Costs: every event is signed and scheduled before the clock starts.
	perEvent := freshEventBytes(c.Size) + 40 // + its schedule
	r.memory("burst-size", c.BurstSize, float64(c.Bursts)*float64(c.BurstSize), perEvent, "event")
	if c.BetweenRate > 0 {
		r.memory("between-rate", c.BetweenRate, c.BetweenRate*float64(c.Bursts)*c.Every.Seconds(), perEvent, "event")
	}
	r.conns("connections", c.Connections, c.Connections+1)
	r.add(c.outputFlags.validate())
	return r.err
}

func (c *burstCmd) Run(g *Globals) error {
	return runLiveCommand(g, "burst", c.targetFlags, c.liveKeyFlags, c.outputFlags, c.workload(), map[string]any{
		"bursts": c.Bursts, "burst_size": c.BurstSize, "every": c.Every.String(), "connections": c.Connections,
		"window": c.Window, "between_rate": c.BetweenRate, "size": c.Size, "store": c.Store,
	})
}

// workload is the burst workload with this command's options.
func (c *burstCmd) workload() runner.Workload {
	o := c.BurstOptions
	o.Seed = c.liveKeyFlags.Seed
	return declared("burst", &o)
}
