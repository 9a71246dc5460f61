package main

import (
	"context"
	"fmt"
	"time"

	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/runner"
	"github.com/relaybench/relaybench/workload"
)

type lifecycleCmd struct {
	targetFlags
	liveKeyFlags
	outputFlags
	Events      int           `name:"timing-events" aliases:"events" default:"100" help:"Events sampled, sent one at a time (reference: -timing-events)."`
	Size        int           `default:"1024" help:"Content bytes of each event."`
	Timeout     time.Duration `default:"5s" help:"How long to wait for an OK and for the live delivery."`
	ReadTimeout time.Duration `name:"read-timeout" default:"2s" help:"How long after the OK a REQ by id is retried before the event counts as never readable."`
}

func init() {
	register("lifecycle", "Event lifecycle timing: send→OK, send→live delivery, send→readable by id, per event (reference: -timing).", &lifecycleCmd{})
}

func (c *lifecycleCmd) Run(g *Globals) error {
	return runLiveCommand(g, "lifecycle", c.targetFlags, c.liveKeyFlags, c.outputFlags, c.workload(), map[string]any{
		"events": c.Events, "size": c.Size, "timeout": c.Timeout.String(), "read_timeout": c.ReadTimeout.String(), "store": c.Store,
	})
}

// workload is the lifecycle workload with this command's options.
func (c *lifecycleCmd) workload() runner.Workload {
	return runner.Workload{Name: "lifecycle", Run: func(ctx context.Context, env runner.Env) ([]results.Phase, error) {
		o := workload.LifecycleOptions{
			Events: c.Events, Size: c.Size, Timeout: c.Timeout, ReadTimeout: c.ReadTimeout, Seed: c.Seed,
			Progress: env.Progress(fmt.Sprintf("Timing %d events", c.Events), int64(c.Events)),
			Begin:    env.Sample,
		}
		return onePhase(workload.Lifecycle(ctx, env.URL, env.Corpus, o))
	}}
}
