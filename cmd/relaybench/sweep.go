package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/relaybench/relaybench/nip11"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/runner"
	"github.com/relaybench/relaybench/workload"
)

type sweepCmd struct {
	targetFlags
	liveKeyFlags
	outputFlags
	Sizes       []int         `default:"256,1024,4096,16384,65536,131072" help:"Content sizes in bytes (capped by the relay's announced max_message_length / max_content_length)."`
	Events      int           `default:"2000" help:"Events per size."`
	Publishers  int           `default:"1" help:"Publisher connections."`
	Subscribers int           `default:"1" help:"Subscriber connections (each gets every event)."`
	Mode        string        `default:"pipeline" enum:"wait,pipeline" help:"wait: one EVENT in flight per publisher; pipeline: up to --window."`
	Window      int           `default:"64" help:"Pipelined: unacknowledged EVENTs per publisher."`
	Rate        float64       `default:"0" help:"Total events/s, open loop; 0: closed loop."`
	Duration    time.Duration `default:"0s" help:"Per size: stop publishing after this (0: all events)."`
	Grace       time.Duration `default:"2s" help:"Wait for late deliveries this long after the last OK."`
	Timeout     time.Duration `default:"10s" help:"How long an EVENT may wait for its OK, and a REQ for its EOSE."`
}

func init() {
	register("sweep", "Payload sweep: publish and fan-out at each content size; msg/s, MB/s, mean, p50, p95, p99 per size.", &sweepCmd{})
}

func (c *sweepCmd) Run(g *Globals) error {
	return runLiveCommand(g, "sweep", c.targetFlags, c.liveKeyFlags, c.outputFlags, c.workload(), map[string]any{
		"sizes": c.Sizes, "events": c.Events, "publishers": c.Publishers, "subscribers": c.Subscribers,
		"mode": c.Mode, "window": c.Window, "rate": c.Rate, "store": c.Store,
	})
}

// workload is the payload sweep with this command's options: one phase per
// size, "sweep/<bytes>"; sizes above the relay's announced limits are skipped
// and the first phase's notes say why.
func (c *sweepCmd) workload() runner.Workload {
	return runner.Workload{Name: "sweep", Run: func(ctx context.Context, env runner.Env) ([]results.Phase, error) {
		lim := &nip11.Limitation{}
		if env.Info != nil {
			lim = &env.Info.Limitation
		}
		var skipped []string
		o := workload.SweepOptions{
			Sizes: c.Sizes, Events: c.Events, Publishers: c.Publishers, Subscribers: c.Subscribers,
			Mode: c.Mode, Window: c.Window, Rate: c.Rate, Duration: c.Duration, Grace: c.Grace, Timeout: c.Timeout,
			Seed: c.Seed, Limits: lim, Begin: env.Sample,
			OnSkip: func(size int, reason string) {
				skipped = append(skipped, fmt.Sprintf("sweep: %d bytes skipped: %s", size, reason))
			},
		}
		// One size at a time, for the progress; each size's phase gets the
		// relay's resource use over its own timed window (o.Begin).
		update := env.Progress(fmt.Sprintf("Sweeping %d sizes", len(c.Sizes)), int64(len(c.Sizes)))
		var phases []results.Phase
		var err error
		for i, size := range c.Sizes {
			if ctx.Err() != nil {
				break
			}
			o.Sizes = []int{size}
			got, serr := workload.Sweep(ctx, env.URL, env.Corpus, o)
			phases = append(phases, got...)
			update(int64(i + 1))
			if serr != nil && !errors.Is(serr, workload.ErrNoSize) {
				err = serr
				break
			}
		}
		if len(phases) > 0 {
			phases[0].Notes = append(phases[0].Notes, skipped...)
		} else if err == nil && ctx.Err() == nil {
			err = fmt.Errorf("%w: %s", workload.ErrNoSize, strings.Join(skipped, "; "))
		}
		return phases, err
	}}
}
