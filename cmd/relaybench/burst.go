package main

import (
	"context"
	"fmt"
	"time"

	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/runner"
	"github.com/relaybench/relaybench/workload"
)

type burstCmd struct {
	targetFlags
	liveKeyFlags
	outputFlags
	Bursts         int           `default:"5" help:"Number of bursts."`
	BurstSize      int           `name:"burst-size" default:"1000" help:"Events per burst."`
	Every          time.Duration `default:"2s" help:"Burst period; burst k starts at (k+½)×every."`
	Connections    int           `default:"4" help:"Connections sharing each burst."`
	Window         int           `default:"1024" help:"Unacknowledged EVENTs allowed per burst connection."`
	BetweenRate    float64       `name:"between-rate" default:"100" help:"Background events/s, on a connection of their own, throughout (0: none)."`
	RecoveryWithin float64       `name:"recovery-within" default:"0.5" help:"Recovered when background OK latency is within this fraction above its pre-burst median."`
	RecoveryRun    int           `name:"recovery-run" default:"3" help:"…for this many consecutive background events."`
	Size           int           `default:"1024" help:"Content bytes of each fresh event."`
	Timeout        time.Duration `default:"10s" help:"How long an EVENT may wait for its OK."`
}

func init() {
	register("burst", "Bursts of events over a low background rate: success and OK latency in and between bursts, and recovery time.", &burstCmd{})
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
	return runner.Workload{Name: "burst", Run: func(ctx context.Context, env runner.Env) ([]results.Phase, error) {
		total := int64(c.Bursts * c.BurstSize)
		if c.BetweenRate > 0 {
			total += int64(c.BetweenRate * (time.Duration(c.Bursts) * c.Every).Seconds())
		}
		o := workload.BurstOptions{
			Bursts: c.Bursts, BurstSize: c.BurstSize, Every: c.Every, Connections: c.Connections, Window: c.Window,
			BetweenRate: backgroundRate(c.BetweenRate), RecoveryWithin: c.RecoveryWithin, RecoveryRun: c.RecoveryRun,
			Size: c.Size, Timeout: c.Timeout, Seed: c.Seed,
			Progress: env.Progress(fmt.Sprintf("Sending %d bursts of %d events", c.Bursts, c.BurstSize), total),
			Begin:    env.Sample,
		}
		return onePhase(workload.Burst(ctx, env.URL, env.Corpus, o))
	}}
}
