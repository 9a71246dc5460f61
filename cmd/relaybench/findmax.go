package main

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/relaybench/relaybench/harness"
	"github.com/relaybench/relaybench/threshold"
	"github.com/relaybench/relaybench/workload"
)

type findMaxCmd struct {
	targetFlags
	liveKeyFlags
	outputFlags
	Size         int           `default:"1024" help:"Content bytes of each published event."`
	P99          time.Duration `name:"p99" default:"50ms" help:"Latency target: corrected OK p99 (from each event's intended send time) of a passing step."`
	MaxDrops     int64         `name:"max-drops" default:"0" help:"Most ops a passing step may drop (not started within --load-max-lateness)."`
	MaxRefusals  int64         `name:"max-refusals" default:"0" help:"Most refusals (OK false, rate-limited: included) a passing step may get."`
	StartRate    float64       `name:"start-rate" default:"1000" help:"Rate of the first step, events/s; doubled until a step fails, then bisected."`
	MaxRate      float64       `name:"max-rate" default:"1000000" help:"Never offer more than this, events/s."`
	StepDuration time.Duration `name:"step-duration" default:"10s" help:"Length of each constant-rate step."`
	Precision    float64       `default:"0.05" help:"Stop when the lowest failing rate is within this fraction of the highest passing one."`
	MaxSteps     int           `name:"max-steps" default:"25" help:"Most steps to run."`
	Pool         int           `name:"load-pool" default:"1000" help:"Most events in flight at once."`
	Connections  int           `name:"load-connections" default:"0" help:"Connections the events are spread over (default min(--load-pool, 8))."`
	MaxLateness  time.Duration `name:"load-max-lateness" default:"1s" help:"An event that cannot be sent within this of its intended time is dropped (counted)."`
	Warmup       time.Duration `name:"load-warmup" default:"0s" help:"Start of each step left out of latency (default min(2s, step/5))."`
	MaxEvents    int           `name:"load-max-events" default:"0" help:"Stop before a step needing more distinct pre-signed events than this (0: no cap; the events of a step are signed into a temporary file, not held in memory)."`
	Constraints  string        `name:"load-constraints" placeholder:"CPU,MEM" help:"Run the relay relaybench starts under these limits (cgroups), e.g. cpu=0.5,mem=256M."`
	Timeout      time.Duration `default:"10s" help:"How long an EVENT may wait for its OK."`
}

func init() {
	register("find-max", "Search for the highest constant publish rate the relay sustains within a latency target (fresh events each step, warm-up excluded).", &findMaxCmd{})
}

// checkFlags checks every flag before anything starts (see check.go).
func (c *findMaxCmd) checkFlags() error {
	var r ranges
	r.Add(c.targetFlags.validate())
	r.Add(c.liveKeyFlags.validate())
	r.Size("size", c.Size)
	r.Positive("p99", c.P99)
	r.Min64("max-drops", c.MaxDrops, 0)
	r.Min64("max-refusals", c.MaxRefusals, 0)
	r.RateMax("start-rate", c.StartRate, false, "step-duration", c.StepDuration)
	r.RateMax("max-rate", c.MaxRate, false, "step-duration", c.StepDuration)
	if r.Err() == nil && c.MaxRate < c.StartRate {
		r.Bad("start-rate", c.StartRate, "must not exceed --max-rate %g", c.MaxRate)
	}
	r.Positive("step-duration", c.StepDuration)
	r.Fraction("precision", c.Precision)
	r.Min("max-steps", c.MaxSteps, 1)
	r.Add(c.runFlags().validate("step-duration", c.StepDuration))
	r.Add(c.outputFlags.validate())
	return r.Err()
}

// figurePlan is what find-max writes (its one phase), for checking
// --threshold figures before any work.
func (c *findMaxCmd) figurePlan() threshold.Plan { return livePlan(false, "find-max") }

// runFlags are the open-loop settings, to check as load checks its own.
func (c *findMaxCmd) runFlags() loadRunFlags {
	t := workload.LoadTuning{Pool: c.Pool, Connections: c.Connections, MaxLateness: c.MaxLateness, Warmup: c.Warmup, MaxEvents: c.MaxEvents}
	return loadRunFlags{LoadTuning: t, Constraints: c.Constraints, Timeout: c.Timeout}
}

func (c *findMaxCmd) Run(g *Globals) error {
	s, err := startLive(g, "find-max", c.targetFlags, c.outputFlags)
	if err != nil {
		return err
	}
	params := map[string]any{
		"p99": c.P99.String(), "max_drops": c.MaxDrops, "max_refusals": c.MaxRefusals, "start_rate": c.StartRate,
		"max_rate": c.MaxRate, "step_duration": c.StepDuration.String(), "precision": c.Precision, "pool": c.Pool,
		"connections": c.Connections, "size": c.Size, "constraints": c.Constraints, "store": c.Store,
	}
	lf := loadRunFlags{Constraints: c.Constraints}
	inst, cleanup, err := lf.limitRelay(s)
	if err != nil {
		s.stop()
		return err
	}
	defer cleanup() // after finish has stopped the relay
	keys, err := c.keys(g.Ctx)
	if err != nil {
		return s.finish(params, err)
	}
	s.setCorpus(keys)
	s.run.Corpus.Authors = signingKeys(keys) // the keys that sign its fresh events, as load records
	o := workload.FindMaxOptions{
		Load: workload.LoadOptions{Base: workload.Base{Timeout: c.Timeout, Seed: c.Seed},
			Pool: c.Pool, Connections: c.Connections, MaxLateness: c.MaxLateness,
			Size: c.Size, MaxEvents: c.MaxEvents,
		},
		StartRate: c.StartRate, MaxRate: c.MaxRate, StepDuration: c.StepDuration, Warmup: c.Warmup, P99: c.P99,
		MaxDrops: c.MaxDrops, MaxRefusals: c.MaxRefusals, Precision: c.Precision, MaxSteps: c.MaxSteps,
	}
	if s.target.Probe != nil {
		o.Load.Begin = s.target.Probe.Begin
	}
	if managed, ok := s.target.Probe.(*harness.Instance); ok && managed != nil {
		o.Check = func() error {
			if why := relayDied(managed); why != "" {
				return errors.New(why)
			}
			return nil
		}
	}
	if !c.Quiet {
		o.Progress = os.Stderr
	}
	if !c.Quiet && !c.NoProgress {
		o.Load.Live = os.Stderr // the per-second lines: progress
	}
	ph, res, err := workload.FindMax(g.Ctx, s.target.URL, keys, o)
	if ph.Counts != nil {
		limitNotes(s.run, &ph, inst)
		s.run.Phases = append(s.run.Phases, ph)
	}
	if res != nil && !c.Quiet {
		fmt.Fprintf(os.Stderr, "find-max: %s\n", res.Answer)
	}
	return s.finish(params, err)
}
